package io.github.ratelimit.sample.ops;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Hostile and broken input against the sample application, with the in-memory store and
 * with Redis: huge and awkward keys, expressions that fail or return nonsense at run
 * time, costs above the limit, and an attacker rotating a million keys.
 * <p>
 * What the web layer does with an expression that fails at run time: the exception
 * propagates out of the filter (or the {@code @RateLimited} method) to Spring Boot's
 * error handling, which answers 500 with its default body (no message, no stack trace)
 * and logs the exception, whose message names the rule or annotation and the expression.
 * It is a bug in the application's configuration, not the client's fault.
 */
@ExtendWith(OutputCaptureExtension.class)
class BadInputTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final int MAX_KEYS = 10_000;

	private static SampleInstance memory;

	private static SampleInstance withRedis;

	@BeforeAll
	static void start() {
		memory = SampleInstance.memory("bad-input-memory", List.of(BadInputBeans.class), arguments());
		assertThat(memory.bean(RateLimitStore.class)).isInstanceOf(InMemoryRateLimitStore.class);
		// Input handling is the subject here, not slow stores: a timeout that Redis, on a
		// build machine's busy cores, can never miss keeps every decision on Redis (time
		// this test's own JVM spends too busy to run does not count against the timeout
		// anyway). RedisFaultTests and TwoInstancesOneLimitIT use the default.
		List<String> redisArguments = new ArrayList<>(List.of(arguments()));
		redisArguments.add("--ratelimit.redis.timeout=2s");
		withRedis = SampleInstance.redis("bad-input-redis", redis, List.of(BadInputBeans.class), (context) -> {
		}, redisArguments.toArray(String[]::new));
		assertThat(withRedis.bean(RateLimitStore.class)).isInstanceOf(FailoverRateLimitStore.class);
	}

	@AfterAll
	static void stop() {
		try {
			if (memory != null) {
				memory.close();
			}
		}
		finally {
			if (withRedis != null) {
				withRedis.close();
			}
		}
	}

	private static String[] arguments() {
		return new String[] { "--server.max-http-request-header-size=2MB", "--ratelimit.memory.max-keys=" + MAX_KEYS,
				// a header-keyed rule
				"--ratelimit.filter.rules[0].paths=/bad/header", "--ratelimit.filter.rules[0].bucket=bad-header",
				"--ratelimit.filter.rules[0].key=#request.getHeader('X-Key')",
				"--ratelimit.buckets.bad-header.algorithm=sliding-log", "--ratelimit.buckets.bad-header.limit=3",
				"--ratelimit.buckets.bad-header.window=1h",
				// a rule keyed by a query parameter, which may hold any character
				"--ratelimit.filter.rules[1].paths=/bad/param", "--ratelimit.filter.rules[1].bucket=bad-param",
				"--ratelimit.filter.rules[1].key=#request.getParameter('k')",
				"--ratelimit.buckets.bad-param.algorithm=sliding-log", "--ratelimit.buckets.bad-param.limit=2",
				"--ratelimit.buckets.bad-param.window=1h",
				// a key expression that throws without the header
				"--ratelimit.filter.rules[2].paths=/bad/spel", "--ratelimit.filter.rules[2].bucket=bad-spel",
				"--ratelimit.filter.rules[2].key=#request.getHeader('X-Id').toUpperCase()",
				"--ratelimit.buckets.bad-spel.limit=100", "--ratelimit.buckets.bad-spel.window=1h",
				// a cost from the request
				"--ratelimit.filter.rules[3].paths=/bad/cost", "--ratelimit.filter.rules[3].bucket=bad-cost",
				"--ratelimit.filter.rules[3].cost=#request.getParameter('cost')",
				"--ratelimit.buckets.bad-cost.algorithm=token-bucket", "--ratelimit.buckets.bad-cost.limit=5",
				"--ratelimit.buckets.bad-cost.window=1h",
				// for the key flood, through the Acquirer
				"--ratelimit.buckets.flood.algorithm=token-bucket", "--ratelimit.buckets.flood.limit=3",
				"--ratelimit.buckets.flood.window=1h" };
	}

	private static SampleInstance app(String store) {
		return store.equals("redis") ? withRedis : memory;
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "memory", "redis" })
	void oneMegabyteKeysAreLimitedPerKeyAndLeaveOtherKeysAlone(String store) {
		SampleInstance app = app(store);
		String big = "A".repeat(1 << 20);
		String bigToo = big.substring(1) + "B";
		String small = "small-key";
		for (String key : List.of(big, bigToo, small)) {
			for (int i = 0; i < 3; i++) {
				assertThat(app.get("/bad/header", "X-Key", key).statusCode()).as("request %d of 3", i + 1)
					.isEqualTo(404);
			}
		}
		for (String key : List.of(big, bigToo, small)) {
			HttpResponse<String> fourth = app.get("/bad/header", "X-Key", key);
			assertThat(fourth.statusCode()).as("fourth request of a %d-character key", key.length()).isEqualTo(429);
			assertThat(fourth.headers().firstValue("Retry-After")).isPresent();
		}
		assertThat(app.get("/bad/header", "X-Key", "another-key").statusCode()).isEqualTo(404);
		if (store.equals("redis")) {
			List<String> keys = redisKeys("rl:{bad-header:*");
			System.out.printf("[ops] 1 MB keys in Redis: %s%n", keys);
			assertThat(keys).hasSize(4).allSatisfy((name) -> assertThat(name.length()).isLessThan(100));
			assertThat(keys).contains("rl:{bad-header:small-key}:sl0:3600000000");
		}
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "memory", "redis" })
	void keysWithNewlinesBracesAndUnicodeStayDistinctAndKeepTheirState(String store) {
		SampleInstance app = app(store);
		List<String> keys = List.of("line\nbreak", "line\rbreak", "line\r\nbreak", "{braces}", "%7Bbraces%7D", "}{",
				"a}:{b", "rl:{bad-param:x}:sl0", "a b", "a%20b", "a+b", "a:b", "ключ", "🔑", "\u00e9", "e\u0301",
				"\u0000leading-nul", "tab\there", "x".repeat(200) + "1", "x".repeat(200) + "2");
		// Limit 2 per key: two rounds admitted, the third rejected, for every key. Keys
		// that collided would share a limit and be rejected in the second round.
		for (int round = 1; round <= 3; round++) {
			int expected = (round <= 2) ? 404 : 429;
			for (String key : keys) {
				HttpResponse<String> response = app
					.get("/bad/param?k=" + URLEncoder.encode(key, StandardCharsets.UTF_8));
				assertThat(response.statusCode()).as("round %d, key %s", round, printable(key)).isEqualTo(expected);
			}
		}
		if (store.equals("redis")) {
			List<String> names = redisKeys("rl:{bad-param:*");
			assertThat(names).as("one Redis key per distinct key").hasSize(keys.size());
			assertThat(names).allSatisfy((name) -> {
				assertThat(name.chars().filter((c) -> c == '{').count()).as(name).isEqualTo(1);
				assertThat(name.chars().filter((c) -> c == '}').count()).as(name).isEqualTo(1);
				assertThat(name.chars().allMatch((c) -> c > ' ' && c < 127)).as("printable ASCII: %s", name).isTrue();
			});
			assertThat(names).contains("rl:{bad-param:a%20b}:sl0:3600000000", "rl:{bad-param:a%2520b}:sl0:3600000000",
					"rl:{bad-param:%7Bbraces%7D}:sl0:3600000000", "rl:{bad-param:line%0Abreak}:sl0:3600000000");
		}
	}

	@Test
	void keyExpressionThatThrowsInAFilterRuleAnswers500AndLogsTheRuleAndExpression(CapturedOutput output) {
		HttpResponse<String> response = memory.get("/bad/spel");
		assertThat(response.statusCode()).isEqualTo(500);
		assertNoDetailsLeak(response, "toUpperCase");
		assertThat(output).contains("ratelimit.filter.rules[2].key")
			.contains("#request.getHeader('X-Id').toUpperCase()");
		// The rule works when the expression does, and other rules are unaffected.
		assertThat(memory.get("/bad/spel", "X-Id", "abc").statusCode()).isEqualTo(404);
		assertThat(memory.get("/api/greeting").statusCode()).isEqualTo(200);
	}

	@Test
	void keyExpressionThatThrowsInAnAnnotationIsAClearErrorAndA500(CapturedOutput output) {
		BadInputService service = memory.bean(BadInputService.class);
		String where = "@RateLimited(key) on BadInputTests.BadInputService.keyed(String)";
		assertThatIllegalStateException().isThrownBy(() -> service.keyed("abc"))
			.withMessageContaining("'#id.substring(5)'")
			.withMessageContaining(where);
		HttpResponse<String> response = memory.get("/bad/annotated/key?id=abc");
		assertThat(response.statusCode()).isEqualTo(500);
		assertNoDetailsLeak(response, "substring");
		assertThat(output).contains("SpEL '#id.substring(5)' in " + where + " failed");
		assertThat(memory.get("/bad/annotated/key?id=abcdefgh").statusCode()).isEqualTo(200);
	}

	@Test
	void limitExpressionReturningZeroNegativeOrNullIsAClearError() {
		BadInputService service = memory.bean(BadInputService.class);
		String where = "@RateLimited(limitExpression) on BadInputTests.BadInputService.limited(String, Long): '#limit'";
		assertThatIllegalArgumentException().isThrownBy(() -> service.limited("zero", 0L))
			.withMessage(where + " must be positive but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> service.limited("negative", -5L))
			.withMessage(where + " must be positive but was -5");
		assertThatIllegalArgumentException().isThrownBy(() -> service.limited("null", null))
			.withMessage(where + " must evaluate to a whole number but was null");
		// A valid limit works, and the failed calls took nothing.
		assertThat(service.limited("zero", 2L)).isEqualTo("ok");
		assertThat(service.limited("zero", 2L)).isEqualTo("ok");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.limited("zero", 2L));
		HttpResponse<String> response = memory.get("/bad/annotated/limit?id=web&limit=0");
		assertThat(response.statusCode()).isEqualTo(500);
		assertNoDetailsLeak(response, "#limit");
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "memory", "redis" })
	void costAboveTheLimitIsRejectedForGoodWithoutRetryAfterAndTakesNothing(String store) {
		SampleInstance app = app(store);
		HttpResponse<String> tooCostly = app.get("/bad/cost?cost=6");
		assertThat(tooCostly.statusCode()).isEqualTo(429);
		assertThat(tooCostly.headers().firstValue("Retry-After")).as("no wait helps").isEmpty();
		assertThat(tooCostly.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(tooCostly.body()).contains("retrying will not help")
			.contains("\"violated-policies\":[\"bad-cost\"]");
		assertThat(app.get("/bad/cost?cost=5").statusCode()).as("the rejection took nothing").isEqualTo(404);
		HttpResponse<String> exhausted = app.get("/bad/cost?cost=1");
		assertThat(exhausted.statusCode()).isEqualTo(429);
		assertThat(exhausted.headers().firstValue("Retry-After")).as("an ordinary rejection").isPresent();

		HttpResponse<String> annotated = app.get("/bad/annotated/cost?cost=6");
		assertThat(annotated.statusCode()).isEqualTo(429);
		assertThat(annotated.headers().firstValue("Retry-After")).isEmpty();
		assertThat(annotated.body()).contains("retrying will not help");
		assertThat(app.get("/bad/annotated/cost?cost=5").statusCode()).isEqualTo(200);
		assertThat(app.get("/bad/annotated/cost?cost=1").statusCode()).isEqualTo(429);
	}

	@Test
	void costExpressionThatIsNotAPositiveNumberAnswers500AndLogsTheRule(CapturedOutput output) {
		for (String cost : List.of("0", "-1", "abc", "1.5")) {
			HttpResponse<String> response = memory.get("/bad/cost?cost=" + cost);
			assertThat(response.statusCode()).as("cost=%s", cost).isEqualTo(500);
			assertNoDetailsLeak(response, "getParameter");
		}
		assertThat(output).contains("ratelimit.filter.rules[3].cost '#request.getParameter('cost')'");
	}

	@Test
	void aMillionRotatingKeysKeepTheMemoryStoreWithinMaxKeys() {
		InMemoryRateLimitStore store = (InMemoryRateLimitStore) memory.bean(RateLimitStore.class);
		Acquirer acquirer = memory.bean(Acquirer.class);
		BucketDefinition flood = memory.bean(BucketRegistry.class).find("flood");
		assertThat(flood).isNotNull();
		// A real client, over its limit before the flood starts and still trying during
		// it: the flood must not evict its state (which would lift its limit).
		for (int i = 0; i < 3; i++) {
			assertThat(decide(acquirer, flood, "victim").allowed()).isTrue();
		}
		assertThat(decide(acquirer, flood, "victim").allowed()).isFalse();
		long heapBefore = usedHeapAfterGc();
		long started = System.nanoTime();
		long victimAllowed = 0;
		long maxSize = 0;
		for (int i = 0; i < 1_000_000; i++) {
			assertThat(decide(acquirer, flood, "attacker-" + i).allowed()).isTrue();
			if (i % 100 == 0 && decide(acquirer, flood, "victim").allowed()) {
				victimAllowed++;
			}
			if (i % 100_000 == 0) {
				maxSize = Math.max(maxSize, store.size());
			}
		}
		long floodMillis = (System.nanoTime() - started) / 1_000_000;
		long size = store.size();
		long heapAfter = usedHeapAfterGc();
		long growth = heapAfter - heapBefore;
		System.out.printf(
				"[ops] 1,000,000 rotating keys in %d ms: store size %d (max-keys %d, largest seen %d), heap after GC %d MB -> %d MB (%+d KB), victim allowed %d times%n",
				floodMillis, size, MAX_KEYS, maxSize, heapBefore >> 20, heapAfter >> 20, growth >> 10, victimAllowed);
		assertThat(size).isLessThanOrEqualTo(MAX_KEYS);
		assertThat(maxSize).isLessThanOrEqualTo(MAX_KEYS);
		// A stored key costs a few hundred bytes (Caffeine node, key record and string,
		// token bucket state): 10,000 keys are a few MB, while a million kept keys would
		// be several hundred MB. 32 MB is far from both.
		assertThat(growth).as("heap growth after GC, bytes").isLessThan(32L << 20);
		assertThat(victimAllowed).as("times the flood lifted the limit of a client over it").isZero();
	}

	private static Decision decide(Acquirer acquirer, BucketDefinition bucket, String key) {
		return acquirer.tryAcquire(PermitRequest.of(bucket.bucket(), key, 1)).decision();
	}

	private static long usedHeapAfterGc() {
		MemoryMXBean bean = ManagementFactory.getMemoryMXBean();
		for (int i = 0; i < 3; i++) {
			System.gc();
		}
		return bean.getHeapMemoryUsage().getUsed();
	}

	private static void assertNoDetailsLeak(HttpResponse<String> response, String expressionPart) {
		assertThat(response.body()).as("error body")
			.contains("\"status\":500")
			.doesNotContain(expressionPart)
			.doesNotContain("SpEL")
			.doesNotContain("Exception")
			.doesNotContain("\tat ");
	}

	private static List<String> redisKeys(String pattern) {
		String keys = redis.server().command("KEYS", pattern);
		return keys.isEmpty() ? List.of() : List.of(keys.split("\n"));
	}

	private static String printable(String key) {
		StringBuilder text = new StringBuilder();
		key.codePoints().limit(40).forEach((c) -> {
			if (c < ' ' || c == 127) {
				text.append(String.format("\\u%04x", c));
			}
			else {
				text.appendCodePoint(c);
			}
		});
		return text + ((key.length() > 40) ? "... (" + key.length() + " chars)" : "");
	}

	/**
	 * The annotated bean and a controller in front of it.
	 */
	static class BadInputBeans {

		@Bean
		BadInputService badInputService() {
			return new BadInputService();
		}

		@Bean
		BadInputController badInputController(BadInputService badInputService) {
			return new BadInputController(badInputService);
		}

	}

	/**
	 * {@code @RateLimited} methods with expressions that fail or return nonsense for some
	 * arguments.
	 */
	static class BadInputService {

		@RateLimited(bucket = "bad-limit-expression", key = "#id", window = "1h", limitExpression = "#limit")
		public String limited(String id, @Nullable Long limit) {
			return "ok";
		}

		@RateLimited(bucket = "bad-key-expression", key = "#id.substring(5)", limit = 100, window = "1h")
		public String keyed(String id) {
			return "ok";
		}

		@RateLimited(bucket = "bad-cost-expression", limit = 5, window = "1h", cost = "#cost")
		public String costly(long cost) {
			return "ok";
		}

	}

	@RestController
	static class BadInputController {

		private final BadInputService service;

		BadInputController(BadInputService service) {
			this.service = service;
		}

		@GetMapping("/bad/annotated/key")
		String key(@RequestParam String id) {
			return this.service.keyed(id);
		}

		@GetMapping("/bad/annotated/limit")
		String limit(@RequestParam String id, @RequestParam(required = false) @Nullable Long limit) {
			return this.service.limited(id, limit);
		}

		@GetMapping("/bad/annotated/cost")
		String cost(@RequestParam long cost) {
			return this.service.costly(cost);
		}

	}

}
