package io.github.ratelimit.autoconfigure;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.aop.operation.InvalidRateLimitedException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * The {@code ratelimits} endpoint over HTTP, on Spring MVC (Tomcat) and on WebFlux
 * (Netty): read-only unless the application opens it, unknown fields of a live change
 * refused by name, and a live change refused with the message startup gives when a user
 * of the bucket cannot work with the limits it would make.
 */
class RateLimitsEndpointHttpTests {

	private static final String EXPOSED = "--management.endpoints.web.exposure.include=ratelimits";

	private static final String UNRESTRICTED = "--management.endpoint.ratelimits.access=unrestricted";

	private static final String WRITABLE = "--ratelimit.endpoint.limits-write-enabled=true";

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void writesAnswerAsOperationsTheEndpointDoesNotHaveUntilTheApplicationOpensIt(WebApplicationType stack) {
		try (Application app = Application.start(stack, EXPOSED, WRITABLE)) {
			assertThat(app.send("GET", "/actuator/ratelimits", null).statusCode()).isEqualTo(200);
			assertThat(app.send("GET", "/actuator/ratelimits/login/alice", null).statusCode()).isEqualTo(200);
			// A GET shares the reset's path: Boot answers 405 Method Not Allowed there.
			assertThat(app.send("DELETE", "/actuator/ratelimits/login/alice", null).statusCode()).isEqualTo(405);
			// Nothing else is mapped to the bucket's path: 404 Not Found.
			assertThat(app.send("POST", "/actuator/ratelimits/login", "{\"limit\": 3}").statusCode()).isEqualTo(404);
			assertThat(app.send("DELETE", "/actuator/ratelimits/login", null).statusCode()).isEqualTo(404);
			assertThat(limitOf(app, "login")).isEqualTo(5);
		}
		try (Application app = Application.start(stack, EXPOSED, UNRESTRICTED)) {
			assertThat(app.send("DELETE", "/actuator/ratelimits/login/alice", null).statusCode()).isEqualTo(204);
			// Limit changes have a guard of their own.
			HttpResponse<String> refused = app.send("POST", "/actuator/ratelimits/login", "{\"limit\": 3}");
			assertThat(refused.statusCode()).isEqualTo(403);
			assertThat(refused.body()).contains("ratelimit.endpoint.limits-write-enabled=true");
		}
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void unknownFieldsOfAChangeAreRefusedByNameAndNothingChanges(WebApplicationType stack) {
		try (Application app = Application.start(stack, EXPOSED, UNRESTRICTED, WRITABLE)) {
			HttpResponse<String> misspelt = app.send("POST", "/actuator/ratelimits/login",
					"{\"limit\": 3, \"widnow\": \"1m\"}");
			assertThat(misspelt.statusCode()).isEqualTo(400);
			assertThat(JsonPath.<String>read(misspelt.body(), "$.message"))
				.isEqualTo("ratelimit.buckets.login.widnow: not a limit setting; use limit, window, burst, segments,"
						+ " penalty, calendar, zone, algorithm or index");
			HttpResponse<String> two = app.send("POST", "/actuator/ratelimits/login?limt=3", "{\"mode\": \"shadow\"}");
			assertThat(two.statusCode()).isEqualTo(400);
			assertThat(JsonPath.<String>read(two.body(), "$.message"))
				.startsWith("ratelimit.buckets.login.mode, ratelimit.buckets.login.limt: not limit settings; use");
			assertThat(limitOf(app, "login")).isEqualTo(5);
			assertThat(JsonPath.<Object>read(listing(app), "$.overrides")).asString().isEqualTo("{}");
			HttpResponse<String> changed = app.send("POST", "/actuator/ratelimits/login",
					"{\"limit\": 3, \"window\": \"1m\"}");
			assertThat(changed.statusCode()).as(changed.body()).isEqualTo(200);
			assertThat(limitOf(app, "login")).isEqualTo(3);
		}
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "SERVLET", "REACTIVE" })
	void aChangeThatAUserOfTheBucketCannotWorkWithIsRefusedWithTheMessageStartupGives(WebApplicationType stack) {
		String startup = startupFailure(stack, "--ratelimit.buckets.login.algorithm=leaky-bucket");
		assertThat(startup).startsWith("@RateLimited(refundWhen) on RateLimitsEndpointHttpTests.Logins.login(String):"
				+ " bucket 'login' uses LEAKY_BUCKET");
		try (Application app = Application.start(stack, EXPOSED, UNRESTRICTED, WRITABLE)) {
			HttpResponse<String> refused = app.send("POST", "/actuator/ratelimits/login",
					"{\"algorithm\": \"leaky-bucket\"}");
			assertThat(refused.statusCode()).isEqualTo(400);
			assertThat(JsonPath.<String>read(refused.body(), "$.message")).isEqualTo(startup);
			assertThat(JsonPath.<List<String>>read(listing(app), "$.buckets[?(@.name == 'login')].limits[0].algorithm"))
				.containsExactly("sliding-log");
			assertThat(JsonPath.<Object>read(listing(app), "$.overrides")).asString().isEqualTo("{}");
		}
	}

	private static String startupFailure(WebApplicationType stack, String... args) {
		List<Throwable> causes = new ArrayList<>();
		assertThatException().isThrownBy(() -> Application.start(stack, args).close()).satisfies((ex) -> {
			for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
				causes.add(cause);
			}
		});
		return causes.stream()
			.filter(InvalidRateLimitedException.class::isInstance)
			.findFirst()
			.map(Throwable::getMessage)
			.orElseThrow(() -> new AssertionError("no InvalidRateLimitedException in " + causes));
	}

	private static String listing(Application app) {
		HttpResponse<String> response = app.send("GET", "/actuator/ratelimits", null);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return response.body();
	}

	private static long limitOf(Application app, String bucket) {
		List<Number> limits = JsonPath.read(listing(app), "$.buckets[?(@.name == '" + bucket + "')].limits[0].limit");
		assertThat(limits).hasSize(1);
		return limits.get(0).longValue();
	}

	/**
	 * A running application on a free port, with one {@code @RateLimited} method whose
	 * bucket gives permits back.
	 */
	private record Application(ConfigurableApplicationContext context, int port) implements AutoCloseable {

		static Application start(WebApplicationType stack, String... args) {
			List<String> all = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off"));
			all.addAll(List.of(args));
			ConfigurableApplicationContext context = new SpringApplicationBuilder(EndpointApplication.class).web(stack)
				.run(all.toArray(String[]::new));
			return new Application(context,
					context.getEnvironment().getRequiredProperty("local.server.port", Integer.class));
		}

		HttpResponse<String> send(String method, String path, @Nullable String json) {
			HttpRequest.Builder request = LocalHttp.request(this.port, path);
			if (json != null) {
				request.header("Content-Type", "application/json")
					.method(method, HttpRequest.BodyPublishers.ofString(json));
			}
			else {
				request.method(method, HttpRequest.BodyPublishers.noBody());
			}
			return LocalHttp.send(request.build());
		}

		@Override
		public void close() {
			this.context.close();
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
	@Import(Logins.class)
	static class EndpointApplication {

	}

	static class Logins {

		@RateLimited(bucket = "login", key = "#username", limit = 5, window = "1m", algorithm = Algorithm.SLIDING_LOG,
				refundWhen = "#result")
		public boolean login(String username) {
			return false;
		}

	}

}
