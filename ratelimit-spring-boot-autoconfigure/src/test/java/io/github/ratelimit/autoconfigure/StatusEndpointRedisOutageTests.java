package io.github.ratelimit.autoconfigure;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.stream.Stream;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.WebApplicationType;

import io.github.ratelimit.autoconfigure.StatusEndpointHttpTests.Application;
import io.github.ratelimit.testsupport.redis.RedisServer;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The status endpoint while Redis is down follows the failure mode: under {@code closed}
 * it answers the same 503 a limited request gets, otherwise the state of the per-instance
 * fallback, marked {@code degraded}.
 */
class StatusEndpointRedisOutageTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	static Stream<Arguments> stacks() {
		return Stream.of(Arguments.of(WebApplicationType.SERVLET), Arguments.of(WebApplicationType.REACTIVE));
	}

	@ParameterizedTest
	@MethodSource("stacks")
	void closedModeAnswers503WhileRedisIsDown(WebApplicationType stack) {
		try (Application app = Application.start(stack, "redis", StatusEndpointHttpTests.redis(redis),
				"--ratelimit.status-endpoint.enabled=true", "--ratelimit.failure-mode=closed")) {
			String client = "10.2.1.1";
			assertThat(app.get("/rate-limit", client).statusCode()).isEqualTo(200);
			RedisServer server = redis.server();
			server.stop();
			try {
				HttpResponse<String> status = app.get("/rate-limit", client);
				assertThat(status.statusCode()).as(status.body()).isEqualTo(503);
				assertThat(status.headers().firstValue("Content-Type"))
					.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
				assertThat(status.headers().firstValue("Retry-After")).hasValue("1");
				assertThat(JsonPath.<String>read(status.body(), "$.detail"))
					.isEqualTo("Rate limits cannot be checked right now; try again shortly.");
				assertThat(app.get("/api/items", client).statusCode()).isEqualTo(503);
			}
			finally {
				server.start();
			}
		}
	}

	@ParameterizedTest
	@MethodSource("stacks")
	void fallbackModeAnswersThisInstancesStateMarkedDegraded(WebApplicationType stack) {
		try (Application app = Application.start(stack, "redis", StatusEndpointHttpTests.redis(redis),
				"--ratelimit.status-endpoint.enabled=true", "--ratelimit.failure-mode=fallback")) {
			String client = "10.2.2.1";
			HttpResponse<String> healthy = app.get("/rate-limit", client);
			assertThat(JsonPath.<Boolean>read(healthy.body(), "$.degraded")).isFalse();
			RedisServer server = redis.server();
			server.stop();
			try {
				HttpResponse<String> status = app.get("/rate-limit", client);
				assertThat(status.statusCode()).as(status.body()).isEqualTo(200);
				assertThat(JsonPath.<Boolean>read(status.body(), "$.degraded")).isTrue();
				assertThat(JsonPath.<List<String>>read(status.body(), "$.limits[*].bucket"))
					.containsExactly("everything", "api");
			}
			finally {
				server.start();
			}
		}
	}

}
