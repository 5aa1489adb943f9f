package io.github.ratelimit.sample.ops;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.acquire.RateLimitObserver;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitScript;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.status.BreakerState;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServer;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample application (profile {@code redis}, default {@code ratelimit.redis.timeout}
 * of 100ms) against a Redis the test kills, restarts and stalls, in each failure mode.
 * {@code GET /api/greeting} is limited to 10 per 10 seconds per client IP by a filter
 * rule; every request here comes from 127.0.0.1, so all share one key.
 * <p>
 * Measured numbers are printed with an {@code [ops]} prefix (surefire keeps them in
 * {@code target/surefire-reports/*-output.txt}); the assertions use generous bounds.
 */
class RedisFaultTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	/** {@code ratelimit.redis.timeout}'s default, which the sample keeps. */
	private static final long TIMEOUT_MILLIS = 100;

	/** HTTP and scheduling noise on a busy 2-core machine, not Redis time. */
	private static final long MARGIN_MILLIS = 400;

	/** A decision that took this long in the store paid (most of) the Redis timeout. */
	private static final long PAID_TIMEOUT_MILLIS = TIMEOUT_MILLIS - 10;

	/** "Within a few seconds". */
	private static final Duration SWITCH_BACK = Duration.ofSeconds(10);

	private static final String GREETING = "/api/greeting";

	private static final String GREETING_KEY = "rl:{api:127.0.0.1}:swc0:10000000/10";

	private static final long GREETING_LIMIT = 10;

	private SampleInstance app;

	private final StoreTimes storeTimes = new StoreTimes();

	@AfterEach
	void restoreRedisAndStop() {
		try {
			RedisServer server = redis.server();
			if (server.isPaused()) {
				server.resume();
			}
			if (!server.isRunning()) {
				server.start();
			}
		}
		finally {
			if (this.app != null) {
				this.app.close();
			}
		}
	}

	private SampleInstance start(String failureMode) {
		redis.server().flushAll();
		this.app = SampleInstance.redis("fault-" + failureMode, redis, List.of(),
				(context) -> context.getBeanFactory().registerSingleton("opsStoreTimes", this.storeTimes),
				"--ratelimit.failure-mode=" + failureMode);
		assertThat(this.app.bean(RateLimitStore.class)).isInstanceOf(FailoverRateLimitStore.class);
		return this.app;
	}

	@Test
	void killedRedisFallsBackToPerInstanceLimitsWithinTheTimeoutAndRedisTakesOverAgain() throws Exception {
		SampleInstance app = start("fallback");
		List<SampleInstance.Timed> before = drive(app, 3, Duration.ofSeconds(10), 0);
		assertThat(before).extracting(SampleInstance.Timed::status).containsOnly(200);
		assertThat(redisKeys()).containsExactly(GREETING_KEY);
		assertThat(app.storeState()).isEqualTo("healthy");

		try (Traffic search = new Traffic(app, "/api/search")) {
			// Requests in flight when Redis dies: GET /api/search (@RateLimited, shadow
			// mode: counted, never rejected) from a second client, throughout.
			pause(200);
			redis.server().stop();
			greetingThroughOutageAndRecovery(app);
			List<SampleInstance.Timed> answers = search.stop();
			Latencies latencies = Latencies.of(answers);
			System.out.printf("[ops] redis killed mid-traffic: %d concurrent /api/search requests, latency %s%n",
					answers.size(), latencies);
			assertThat(answers).as("concurrent traffic across the kill and the restart")
				.extracting(SampleInstance.Timed::status)
				.containsOnly(200);
			assertThat(latencies.max()).isLessThanOrEqualTo(TIMEOUT_MILLIS + MARGIN_MILLIS);
		}
	}

	/**
	 * Redis was just killed: /api/greeting from the main client, through the outage and
	 * Redis coming back.
	 */
	private static void greetingThroughOutageAndRecovery(SampleInstance app) {
		List<SampleInstance.Timed> outage = drive(app, Integer.MAX_VALUE, Duration.ofMillis(2500), 10);
		Latencies latencies = Latencies.of(outage);
		System.out.printf("[ops] redis killed: %d requests in 2.5 s, %d allowed, %d rejected; latency %s%n",
				outage.size(), count(outage, 200), count(outage, 429), latencies);
		assertThat(outage).as("answers while Redis is down")
			.extracting(SampleInstance.Timed::status)
			.isSubsetOf(200, 429);
		assertThat(count(outage, 200))
			.as("the instance's fallback enforces 10 per 10 s, from the 7 that Redis had left of them")
			.isEqualTo(GREETING_LIMIT - 3);
		assertThat(latencies.max()).as("slowest answer while Redis is down (ms)")
			.isLessThanOrEqualTo(TIMEOUT_MILLIS + MARGIN_MILLIS);
		assertThat(latencies.median()).as("median answer while Redis is down (ms)").isLessThan(TIMEOUT_MILLIS / 2);
		assertThat(app.storeState()).isEqualTo("degraded");
		assertThat(app.storeFailures()).isPositive();

		long restarted = System.nanoTime();
		redis.server().start();
		long[] keysBack = { -1 };
		long[] healthyBack = { -1 };
		List<SampleInstance.Timed> recovery = driveUntil(app, SWITCH_BACK, () -> {
			// This client's key: the other client's (search) can come back first.
			if (keysBack[0] < 0 && redisKeys().contains(GREETING_KEY)) {
				keysBack[0] = System.nanoTime() - restarted;
			}
			if (healthyBack[0] < 0 && app.storeState().equals("healthy")) {
				healthyBack[0] = System.nanoTime() - restarted;
			}
			return keysBack[0] >= 0 && healthyBack[0] >= 0;
		});
		System.out.printf(
				"[ops] redis back: greeting key written to Redis after %d ms, actuator store.state healthy after %d ms%n",
				millis(keysBack[0]), millis(healthyBack[0]));
		assertThat(recovery).extracting(SampleInstance.Timed::status).isSubsetOf(200, 429);
		assertThat(keysBack[0]).as("Redis used again (key written) within %s", SWITCH_BACK).isNotNegative();
		assertThat(healthyBack[0]).as("actuator reports healthy again within %s", SWITCH_BACK).isNotNegative();
		assertThat(redisKeys()).contains(GREETING_KEY);
	}

	@Test
	void stalledRedisIsAnsweredByTheFallbackWithinTheTimeoutAndTheBreakerStopsPayingIt() throws Exception {
		SampleInstance app = start("fallback");
		assertThat(drive(app, 3, Duration.ofSeconds(10), 0)).extracting(SampleInstance.Timed::status).containsOnly(200);
		// Longer than the breaker's window (1s), so that most of the stall is seen with
		// the breaker open.
		CompletableFuture<String> sleep = redis.server().sleep(Duration.ofSeconds(3));
		long started = System.nanoTime();
		List<SampleInstance.Timed> stall = new ArrayList<>();
		Set<String> statesDuringStall = new TreeSet<>();
		while (System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(2500)) {
			stall.add(app.timedGet(GREETING));
			if (stall.size() % 10 == 0) {
				statesDuringStall.add(app.storeState());
			}
			pause(5);
		}
		long stallMillis = millis(System.nanoTime() - started);
		assertThat(sleep.isDone()).as("Redis was asleep throughout").isFalse();
		assertThat(sleep.get(10, TimeUnit.SECONDS)).isEqualTo("OK");

		Latencies latencies = Latencies.of(stall);
		long[] storeMillis = this.storeTimes.millisSince(started);
		long paidTimeout = Arrays.stream(storeMillis).filter((millis) -> millis >= PAID_TIMEOUT_MILLIS).count();
		System.out.printf(
				"[ops] redis stalled (DEBUG SLEEP 3): %d requests in %d ms, %d paid the 100ms timeout; latency %s%n",
				stall.size(), stallMillis, paidTimeout, latencies);
		System.out.printf("[ops] redis stalled: time in the store per decision (server side): %s%n",
				Latencies.of(storeMillis));
		assertThat(storeMillis).as("decisions during the stall").hasSameSizeAs(stall);
		assertThat(stall).extracting(SampleInstance.Timed::status).isSubsetOf(200, 429);
		assertThat(latencies.max()).as("slowest answer during the stall (ms)")
			.isLessThanOrEqualTo(TIMEOUT_MILLIS + MARGIN_MILLIS);
		assertThat(Latencies.of(storeMillis).max()).as("longest decision during the stall, server side (ms)")
			.isLessThanOrEqualTo(TIMEOUT_MILLIS + MARGIN_MILLIS);
		// The breaker opens once calls have failed for 1s (ratelimit.breaker.window):
		// at most 1s / 100ms + 1 calls one after the other pay the timeout before it
		// does, then 3 probes after each second open.
		long probeRounds = stallMillis / 1000 + 1;
		assertThat(paidTimeout).as("requests that paid the timeout")
			.isGreaterThanOrEqualTo(1)
			.isLessThanOrEqualTo(1000 / TIMEOUT_MILLIS + 1 + 3 * probeRounds);
		assertThat(paidTimeout * 4).as("only a few requests pay the timeout; the rest skip Redis")
			.isLessThan(storeMillis.length);
		// (The breaker's half-open probing, 3 calls after each second open, reports
		// healthy.)
		assertThat(statesDuringStall).as("actuator store.state during the stall").contains("degraded");

		long awake = System.nanoTime();
		driveUntil(app, SWITCH_BACK, () -> app.storeState().equals("healthy"));
		System.out.printf("[ops] redis awake again: healthy after %d ms%n", millis(System.nanoTime() - awake));
		assertThat(app.storeState()).isEqualTo("healthy");
	}

	@Test
	void restartedOrFlushedRedisGetsTheScriptAgain() {
		SampleInstance app = start("fallback");
		String sha = RedisRateLimitScript.load().sha1();
		assertThat(app.get(GREETING).statusCode()).isEqualTo(200);
		assertThat(redis.server().command("SCRIPT", "EXISTS", sha)).isEqualTo("1");

		// SCRIPT FLUSH: NOSCRIPT is handled inside the store, no failure, no fallback.
		long failures = app.storeFailures();
		redis.server().command("SCRIPT", "FLUSH");
		assertThat(redis.server().command("SCRIPT", "EXISTS", sha)).isEqualTo("0");
		assertThat(app.get(GREETING).statusCode()).isEqualTo(200);
		assertThat(redis.server().command("SCRIPT", "EXISTS", sha)).isEqualTo("1");
		assertThat(app.storeFailures()).as("failures after SCRIPT FLUSH").isEqualTo(failures);
		assertThat(greetingCountInRedis()).as("both decisions in Redis").isEqualTo(2);

		// Restart: a new, empty Redis without the script.
		redis.server().restart();
		long restarted = System.nanoTime();
		assertThat(redis.server().command("SCRIPT", "EXISTS", sha)).isEqualTo("0");
		List<SampleInstance.Timed> recovery = driveUntil(app, SWITCH_BACK,
				() -> !redisKeys().isEmpty() && breakerState(app) == BreakerState.CLOSED);
		System.out.printf("[ops] redis restarted: decisions in Redis again, breaker closed, after %d ms%n",
				millis(System.nanoTime() - restarted));
		assertThat(recovery).extracting(SampleInstance.Timed::status).isSubsetOf(200, 429);
		assertThat(redisKeys()).as("Redis used again within %s", SWITCH_BACK).isNotEmpty();
		assertThat(breakerState(app)).isEqualTo(BreakerState.CLOSED);
		assertThat(redis.server().command("SCRIPT", "EXISTS", sha)).as("script loaded again").isEqualTo("1");

		// Decisions after the restart are Redis's, and right: exactly 10 of 12 on a key
		// reset through the store (a FLUSHALL would be a data loss, after which the usage
		// heard is written back).
		app.bean(RateLimitStore.class).reset("api", "127.0.0.1", app.bean(BucketRegistry.class).find("api").limits());
		List<SampleInstance.Timed> after = drive(app, 12, Duration.ofSeconds(10), 0);
		assertThat(after).extracting(SampleInstance.Timed::status)
			.containsExactly(200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429, 429);
		assertThat(greetingCountInRedis()).isEqualTo(GREETING_LIMIT);
	}

	@Test
	void failureModeOpenAllowsEverythingWhileRedisIsDown() {
		SampleInstance app = start("open");
		List<SampleInstance.Timed> up = drive(app, 12, Duration.ofSeconds(10), 0);
		assertThat(count(up, 429)).as("Redis up: the limit holds").isEqualTo(2);
		assertThat(app.get("/actuator/concurrency").statusCode()).isEqualTo(200);
		assertThat(app.get("/actuator/concurrency/exports/acme").statusCode()).isEqualTo(200);
		assertThat(app.get("/actuator/concurrency/no-such-bucket/acme").statusCode()).isEqualTo(404);

		redis.server().stop();
		// The client Redis rejected just before the outage is answered from the
		// remembered rejection (no Redis call) until the instance knows Redis is gone:
		// its connection closing, which Lettuce sees within milliseconds.
		awaitDisconnected(app);
		List<SampleInstance.Timed> down = drive(app, 30, Duration.ofSeconds(10), 0);
		Latencies latencies = Latencies.of(down);
		System.out.printf("[ops] failure-mode open, redis down: %d requests, latency %s%n", down.size(), latencies);
		assertThat(down).as("open: everything allowed").extracting(SampleInstance.Timed::status).containsOnly(200);
		assertThat(latencies.max()).isLessThanOrEqualTo(TIMEOUT_MILLIS + MARGIN_MILLIS);
		for (int i = 0; i < 8; i++) {
			// @RateLimited, 5 per minute on the free plan
			assertThat(app.get("/api/reports", "X-Api-Key", "demo-free").statusCode()).isEqualTo(200);
		}
		assertThat(app.storeState()).isEqualTo("degraded");
		// An operator looks while Redis is down: told so, not a 500 and a stack trace.
		HttpResponse<String> holders = app.get("/actuator/concurrency/exports/acme");
		assertThat(holders.statusCode()).as(holders.body()).isEqualTo(503);
		assertThat(holders.body()).contains("\"status\":503", "The concurrency store cannot answer now");
	}

	@Test
	void failureModeClosedAnswers503ProblemJsonWhileRedisIsDown() {
		SampleInstance app = start("closed");
		assertThat(app.get(GREETING).statusCode()).isEqualTo(200);

		redis.server().stop();
		List<SampleInstance.Timed> down = drive(app, 20, Duration.ofSeconds(10), 0);
		Latencies latencies = Latencies.of(down);
		System.out.printf("[ops] failure-mode closed, redis down: %d requests, latency %s%n", down.size(), latencies);
		assertThat(down).as("closed: everything rejected with 503")
			.extracting(SampleInstance.Timed::status)
			.containsOnly(503);
		assertThat(latencies.max()).isLessThanOrEqualTo(TIMEOUT_MILLIS + MARGIN_MILLIS);
		for (SampleInstance.Timed timed : down) {
			assertUnavailableProblem(timed.response());
		}
		// @RateLimited (the interceptor, resolved by the exception resolver)
		assertUnavailableProblem(app.get("/api/reports", "X-Api-Key", "demo-free"));

		redis.server().start();
		List<SampleInstance.Timed> recovery = driveUntil(app, SWITCH_BACK, () -> app.get(GREETING).statusCode() == 200);
		assertThat(recovery).extracting(SampleInstance.Timed::status).isSubsetOf(200, 503);
		assertThat(app.get(GREETING).statusCode()).as("Redis back").isEqualTo(200);
	}

	private static void assertUnavailableProblem(HttpResponse<String> response) {
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(response.body()).contains("\"status\":503").contains("\"title\":\"Service Unavailable\"");
	}

	/**
	 * Sends {@code GET /api/greeting} one after the other.
	 * @param app the application
	 * @param max at most this many requests
	 * @param duration for at most this long
	 * @param pauseMillis pause between requests
	 * @return the answers
	 */
	private static List<SampleInstance.Timed> drive(SampleInstance app, int max, Duration duration, long pauseMillis) {
		List<SampleInstance.Timed> answers = new ArrayList<>();
		long end = System.nanoTime() + duration.toNanos();
		while (answers.size() < max && System.nanoTime() < end) {
			answers.add(app.timedGet(GREETING));
			pause(pauseMillis);
		}
		return answers;
	}

	/**
	 * Sends {@code GET /api/greeting} every 50ms until the condition holds.
	 */
	private static List<SampleInstance.Timed> driveUntil(SampleInstance app, Duration limit, BooleanSupplier done) {
		List<SampleInstance.Timed> answers = new ArrayList<>();
		long end = System.nanoTime() + limit.toNanos();
		while (System.nanoTime() < end) {
			answers.add(app.timedGet(GREETING));
			if (done.getAsBoolean()) {
				break;
			}
			pause(50);
		}
		return answers;
	}

	private static void awaitDisconnected(SampleInstance app) {
		RedisRateLimitStore store = (RedisRateLimitStore) app.bean(FailoverRateLimitStore.class).primary();
		long end = System.nanoTime() + SWITCH_BACK.toNanos();
		while (store.isConnected() && System.nanoTime() < end) {
			pause(10);
		}
		assertThat(store.isConnected()).as("the store sees its connection closed").isFalse();
	}

	private static BreakerState breakerState(SampleInstance app) {
		return app.bean(FailoverRateLimitStore.class).circuitBreaker().state();
	}

	private static List<String> redisKeys() {
		String keys = redis.server().command("KEYS", "rl:*");
		return keys.isEmpty() ? List.of() : List.of(keys.split("\n"));
	}

	/** Sum of the sliding window counter's sub-window counts for the greeting key. */
	private static long greetingCountInRedis() {
		String hash = redis.server().command("HGETALL", GREETING_KEY);
		String[] fields = hash.split("\n");
		long sum = 0;
		for (int i = 1; i < fields.length; i += 2) {
			sum += Long.parseLong(fields[i]);
		}
		return sum;
	}

	private static long count(List<SampleInstance.Timed> answers, int status) {
		return answers.stream().filter((timed) -> timed.status() == status).count();
	}

	private static long millis(long nanos) {
		return (nanos < 0) ? -1 : nanos / 1_000_000L;
	}

	private static void pause(long millis) {
		if (millis <= 0) {
			return;
		}
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Records how long each decision spent in the store (Redis, and the fallback when
	 * Redis fails), as the {@code Acquirer} measures it.
	 */
	static final class StoreTimes implements RateLimitObserver {

		private final Queue<long[]> times = new ConcurrentLinkedQueue<>();

		@Override
		public void onDecision(RateLimitResult result) {
			this.times.add(new long[] { System.nanoTime(), result.storeNanos() });
		}

		long[] millisSince(long nanos) {
			return this.times.stream()
				.filter((time) -> time[0] - nanos >= 0)
				.mapToLong((time) -> time[1] / 1_000_000L)
				.toArray();
		}

	}

	/**
	 * Requests from a second client, one after the other, until stopped.
	 */
	private static final class Traffic implements AutoCloseable {

		private final ExecutorService executor = Executors.newSingleThreadExecutor();

		private final List<SampleInstance.Timed> answers = Collections.synchronizedList(new ArrayList<>());

		private final Future<?> loop;

		private volatile boolean running = true;

		Traffic(SampleInstance app, String path) {
			this.loop = this.executor.submit(() -> {
				while (this.running) {
					this.answers.add(app.timedGet(path));
					pause(5);
				}
			});
		}

		List<SampleInstance.Timed> stop() throws Exception {
			this.running = false;
			this.loop.get(30, TimeUnit.SECONDS);
			synchronized (this.answers) {
				return List.copyOf(this.answers);
			}
		}

		@Override
		public void close() {
			this.running = false;
			this.executor.shutdownNow();
		}

	}

	/**
	 * Latency statistics in milliseconds.
	 *
	 * @param sorted the latencies, ascending
	 */
	private record Latencies(long[] sorted, long[] inOrder) {

		static Latencies of(List<SampleInstance.Timed> answers) {
			return of(answers.stream().mapToLong(SampleInstance.Timed::millis).toArray());
		}

		static Latencies of(long[] millis) {
			assertThat(millis).as("requests measured").isNotEmpty();
			return new Latencies(Arrays.stream(millis).sorted().toArray(), millis);
		}

		long median() {
			return this.sorted[this.sorted.length / 2];
		}

		long p95() {
			return this.sorted[Math.min(this.sorted.length - 1, (int) Math.ceil(this.sorted.length * 0.95) - 1)];
		}

		long max() {
			return this.sorted[this.sorted.length - 1];
		}

		@Override
		public String toString() {
			return "median " + median() + " ms, p95 " + p95() + " ms, max " + max() + " ms (first requests: "
					+ Arrays.toString(Arrays.copyOf(this.inOrder, Math.min(8, this.inOrder.length))) + " ms)";
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof Latencies latencies && Arrays.equals(this.inOrder, latencies.inOrder);
		}

		@Override
		public int hashCode() {
			return Arrays.hashCode(this.inOrder);
		}

	}

}
