package io.github.ratelimit.autoconfigure;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The status endpoint over HTTP, on Spring MVC (Tomcat) and WebFlux (Netty), with the
 * in-memory store and with Redis: off by default, asking spends nothing (also under a
 * rule for every path), each client sees its own key's state and the shared limits, a
 * rejected client sees nothing left and when to retry, and {@code path} narrows the
 * answer to the rules of one request. Clients are told apart by {@code X-Forwarded-For}
 * from the trusted loopback proxy. Limits are sliding logs over an hour, so no permit
 * comes back while a test runs, and each application has a key prefix of its own, so no
 * state carries over on Redis.
 */
class StatusEndpointHttpTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final String ENABLED = "--ratelimit.status-endpoint.enabled=true";

	static Stream<Arguments> stacksAndStores() {
		List<Arguments> arguments = new ArrayList<>();
		for (WebApplicationType stack : List.of(WebApplicationType.SERVLET, WebApplicationType.REACTIVE)) {
			for (String store : List.of("memory", "redis")) {
				arguments.add(Arguments.of(stack, store));
			}
		}
		return arguments.stream();
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void isOffByDefault(WebApplicationType stack) {
		try (Application app = Application.start(stack, "memory")) {
			assertThat(app.get("/rate-limit", "10.1.0.1").statusCode()).isEqualTo(404);
		}
	}

	@ParameterizedTest
	@MethodSource("stacksAndStores")
	void askingSpendsNothingAndARequestSpendsOne(WebApplicationType stack, String store) {
		try (Application app = Application.start(stack, store, ENABLED)) {
			String client = "10.1.1.1";
			for (int i = 0; i < 5; i++) {
				HttpResponse<String> status = app.get("/rate-limit", client);
				assertThat(status.statusCode()).as(status.body()).isEqualTo(200);
				assertThat(status.headers().firstValue("Content-Type"))
					.hasValueSatisfying((type) -> assertThat(type).startsWith("application/json"));
				assertThat(status.headers().firstValue("Cache-Control")).hasValue("no-store");
				assertThat(remaining(status, "api")).isEqualTo(3);
				assertThat(remaining(status, "everything")).isEqualTo(100);
			}
			assertThat(app.get("/api/items", client).statusCode()).isEqualTo(200);
			HttpResponse<String> status = app.get("/rate-limit", client);
			assertThat(remaining(status, "api")).isEqualTo(2);
			assertThat(remaining(status, "everything")).isEqualTo(99);
			String api = "$.limits[?(@.bucket == 'api')]";
			assertThat(JsonPath.<List<Object>>read(status.body(), api + ".paths[0]")).containsExactly("/api/**");
			assertThat(JsonPath.<List<Object>>read(status.body(), api + ".methods[0]")).containsExactly("GET");
			assertThat(JsonPath.<List<Object>>read(status.body(), api + ".shared")).containsExactly(false);
			assertThat(JsonPath.<List<Object>>read(status.body(), api + ".limit")).containsExactly(3);
			assertThat(JsonPath.<List<Object>>read(status.body(), api + ".window")).containsExactly("1h");
			assertThat(JsonPath.<List<Object>>read(status.body(), api + ".retryAfterMillis")).containsExactly(0);
			assertThat(JsonPath.<List<Object>>read(status.body(), api + ".policies[0].name")).containsExactly("api");
			assertThat(JsonPath.<List<Object>>read(status.body(), api + ".policies[0].algorithm"))
				.containsExactly("sliding-log");
			assertThat(JsonPath.<List<Object>>read(status.body(), "$.limits[?(@.bucket == 'everything')].shared"))
				.containsExactly(true);
			assertThat(JsonPath.<Boolean>read(status.body(), "$.degraded")).isFalse();
			// A bucket in shadow mode limits nobody, so it is not listed.
			assertThat(JsonPath.<List<Object>>read(status.body(), "$.limits[*].bucket")).containsExactly("everything",
					"api");
		}
	}

	@ParameterizedTest
	@MethodSource("stacksAndStores")
	void aClientSeesItsOwnKeyAndTheSharedLimitsOnly(WebApplicationType stack, String store) {
		try (Application app = Application.start(stack, store, ENABLED)) {
			String spender = "10.1.2.1";
			String other = "10.1.2.2";
			assertThat(app.get("/api/items", spender).statusCode()).isEqualTo(200);
			assertThat(app.get("/api/items", spender).statusCode()).isEqualTo(200);
			HttpResponse<String> own = app.get("/rate-limit", spender);
			assertThat(remaining(own, "api")).isEqualTo(1);
			// Nothing in the request names a key: a parameter that looks like one changes
			// nothing.
			HttpResponse<String> others = app.get("/rate-limit?key=" + spender + "&clientIp=" + spender, other);
			assertThat(remaining(others, "api")).isEqualTo(3);
			assertThat(remaining(others, "everything")).isEqualTo(98);
			assertThat(others.body()).doesNotContain(spender).doesNotContain(other);
		}
	}

	@ParameterizedTest
	@MethodSource("stacksAndStores")
	void aRejectedClientSeesNothingLeftAndWhenToRetry(WebApplicationType stack, String store) {
		try (Application app = Application.start(stack, store, ENABLED)) {
			String client = "10.1.3.1";
			for (int i = 0; i < 3; i++) {
				assertThat(app.get("/api/items", client).statusCode()).isEqualTo(200);
			}
			HttpResponse<String> rejected = app.get("/api/items", client);
			assertThat(rejected.statusCode()).isEqualTo(429);
			long retryAfterSeconds = Long.parseLong(rejected.headers().firstValue("Retry-After").orElseThrow());
			HttpResponse<String> status = app.get("/rate-limit", client);
			assertThat(status.statusCode()).isEqualTo(200);
			assertThat(remaining(status, "api")).isZero();
			long retryAfterMillis = JsonPath
				.<List<Number>>read(status.body(), "$.limits[?(@.bucket == 'api')].retryAfterMillis")
				.get(0)
				.longValue();
			assertThat(retryAfterMillis).isPositive()
				.isLessThanOrEqualTo(Duration.ofHours(1).toMillis())
				.isLessThanOrEqualTo(Duration.ofSeconds(retryAfterSeconds).toMillis());
			assertThat(
					JsonPath.<List<Number>>read(status.body(), "$.limits[?(@.bucket == 'api')].policies[0].remaining"))
				.containsExactly(0);
			// Asking again while rejected is not rejected and still spends nothing: the
			// shared limit lost the three allowed requests only (the rejected one's
			// permit was given back).
			assertThat(app.get("/rate-limit", client).statusCode()).isEqualTo(200);
			assertThat(remaining(app.get("/rate-limit", client), "everything")).isEqualTo(97);
		}
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void aPathNarrowsTheAnswerToTheRulesOfSuchARequest(WebApplicationType stack) {
		try (Application app = Application.start(stack, "memory", ENABLED)) {
			String client = "10.1.4.1";
			assertThat(buckets(app.get("/rate-limit?path=/api/items", client))).containsExactly("everything", "api");
			assertThat(buckets(app.get("/rate-limit?path=/api/items&method=post", client)))
				.containsExactly("everything");
			assertThat(buckets(app.get("/rate-limit?path=/elsewhere", client))).containsExactly("everything");
			assertThat(buckets(app.get("/rate-limit", client))).containsExactly("everything", "api");
		}
	}

	/**
	 * Returns the arguments that connect an application to a Redis server.
	 * @param server the server
	 * @return the arguments
	 */
	static List<String> redis(RedisServerExtension server) {
		return List.of("--spring.data.redis.host=" + server.host(), "--spring.data.redis.port=" + server.port());
	}

	private static List<String> buckets(HttpResponse<String> status) {
		assertThat(status.statusCode()).as(status.body()).isEqualTo(200);
		return JsonPath.read(status.body(), "$.limits[*].bucket");
	}

	private static long remaining(HttpResponse<String> status, String bucket) {
		assertThat(status.statusCode()).as(status.body()).isEqualTo(200);
		List<Number> remaining = JsonPath.read(status.body(), "$.limits[?(@.bucket == '" + bucket + "')].remaining");
		assertThat(remaining).as(status.body()).hasSize(1);
		return remaining.get(0).longValue();
	}

	/**
	 * A running application on a free port with three filter rules, all applying
	 * ({@code match: all}): {@code api} (3 per hour per client on {@code GET /api/**}),
	 * {@code everything} (100 per hour shared by every client, on every path, the status
	 * path included) and {@code tried} (in shadow mode).
	 */
	record Application(ConfigurableApplicationContext context, int port) implements AutoCloseable {

		static Application start(WebApplicationType stack, String store, String... args) {
			return start(stack, store, store.equals("redis") ? redis(redis) : List.of(), args);
		}

		/**
		 * Starts an application.
		 * @param stack the request stack
		 * @param store {@code memory} or {@code redis}
		 * @param connection the arguments that connect it to Redis, with {@code redis}
		 * @param args more arguments
		 * @return the application
		 */
		static Application start(WebApplicationType stack, String store, List<String> connection, String... args) {
			List<String> all = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
					"--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1", "--ratelimit.filter.match=all",
					"--ratelimit.key-prefix=status-" + UUID.randomUUID(), "--ratelimit.store=" + store,
					"--ratelimit.filter.rules[0].bucket=everything", "--ratelimit.filter.rules[0].limit=100",
					"--ratelimit.filter.rules[0].window=1h", "--ratelimit.filter.rules[0].algorithm=sliding-log",
					"--ratelimit.filter.rules[1].bucket=api", "--ratelimit.filter.rules[1].paths=/api/**",
					"--ratelimit.filter.rules[1].methods=GET", "--ratelimit.filter.rules[1].key=#clientIp",
					"--ratelimit.filter.rules[1].limit=3", "--ratelimit.filter.rules[1].window=1h",
					"--ratelimit.filter.rules[1].algorithm=sliding-log", "--ratelimit.filter.rules[2].bucket=tried",
					"--ratelimit.filter.rules[2].key=#clientIp", "--ratelimit.buckets.tried.mode=shadow"));
			if (store.equals("redis")) {
				all.addAll(connection);
			}
			else {
				all.add("--spring.autoconfigure.exclude="
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration");
			}
			all.addAll(List.of(args));
			ConfigurableApplicationContext context = new SpringApplicationBuilder(StatusApplication.class).web(stack)
				.run(all.toArray(String[]::new));
			return new Application(context,
					context.getEnvironment().getRequiredProperty("local.server.port", Integer.class));
		}

		HttpResponse<String> get(String path, String client) {
			HttpRequest request = LocalHttp.request(this.port, path).header("X-Forwarded-For", client).GET().build();
			return LocalHttp.send(request);
		}

		@Override
		public void close() {
			this.context.close();
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Items.class)
	static class StatusApplication {

	}

	@RestController
	static class Items {

		@GetMapping("/api/items")
		Map<String, String> items() {
			return Map.of("items", "none");
		}

	}

}
