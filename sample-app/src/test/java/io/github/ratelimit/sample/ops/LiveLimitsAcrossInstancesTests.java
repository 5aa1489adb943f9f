package io.github.ratelimit.sample.ops;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A live limit change made through one instance's actuator endpoint applies on another
 * instance on the same Redis, survives a restart of that instance and a reset of a key,
 * and goes away on every instance when cleared. Two sample applications, each its own
 * Spring context and Redis connection, share one {@code redis-server}; only the first has
 * {@code ratelimit.endpoint.limits-write-enabled}.
 */
@ExtendWith(OutputCaptureExtension.class)
class LiveLimitsAcrossInstancesTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	/** Far more than the one-second poll: a bound, not an expectation. */
	private static final Duration PROPAGATION_BOUND = Duration.ofSeconds(30);

	@Test
	void aChangeAppliesOnEveryInstanceAndSurvivesARestartAndAReset(CapturedOutput output) {
		try (SampleInstance writer = start("writer", "--ratelimit.endpoint.limits-write-enabled=true")) {
			try (SampleInstance reader = start("reader")) {
				assertThat(limitOf(reader, "api")).isEqualTo(10);
				HttpResponse<String> refused = reader.send("POST", "/actuator/ratelimits/api", "{\"limit\": 3}");
				assertThat(refused.statusCode()).isEqualTo(403);
				assertThat(refused.body()).contains("ratelimit.endpoint.limits-write-enabled=true");

				long changed = System.nanoTime();
				HttpResponse<String> set = writer.send("POST", "/actuator/ratelimits/api",
						"{\"limit\": 3, \"window\": \"1h\"}");
				assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
				assertThat(set.body()).contains("\"appliesTo\":\"every instance on this Redis\"");
				awaitCondition("the reader to apply the change", () -> limitOf(reader, "api") == 3);
				System.out.printf("[live] change applied on the other instance after %d ms%n",
						(System.nanoTime() - changed) / 1_000_000);
				assertThat(sourceOf(reader, "api")).isEqualTo("override");
				assertThat(JsonPath.<String>read(listing(reader), "$.overrides.api.changedBy")).isEqualTo("anonymous");

				// One limit of 3 per hour for both instances (the key is the client
				// address).
				assertThat(writer.get("/api/greeting").statusCode()).isEqualTo(200);
				assertThat(reader.get("/api/greeting").statusCode()).isEqualTo(200);
				assertThat(reader.get("/api/greeting").statusCode()).isEqualTo(200);
				HttpResponse<String> rejected = reader.get("/api/greeting");
				assertThat(rejected.statusCode()).isEqualTo(429);
				assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=3;w=3600");

			}
			// A restarted instance reads the change from Redis.
			try (SampleInstance restarted = start("reader-restarted")) {
				awaitCondition("the restarted reader to apply the change", () -> limitOf(restarted, "api") == 3);
				assertThat(restarted.get("/api/greeting").statusCode()).isEqualTo(429);

				// A key's reset forgets the key's state, not the change. (On the instance
				// that rejected: another one's reset would leave its local rejection.)
				assertThat(restarted.send("DELETE", "/actuator/ratelimits/api/127.0.0.1", null).statusCode())
					.isEqualTo(204);
				for (int i = 0; i < 3; i++) {
					assertThat(restarted.get("/api/greeting").statusCode()).isEqualTo(200);
				}
				assertThat(restarted.get("/api/greeting").statusCode()).isEqualTo(429);
				assertThat(limitOf(restarted, "api")).isEqualTo(3);

				// Clearing the change brings the configured limits back everywhere.
				HttpResponse<String> cleared = writer.send("DELETE", "/actuator/ratelimits/api", null);
				assertThat(cleared.statusCode()).as(cleared.body()).isEqualTo(200);
				assertThat(limitOf(writer, "api")).isEqualTo(10);
				awaitCondition("the reader to clear the change", () -> limitOf(restarted, "api") == 10);
				assertThat(sourceOf(restarted, "api")).isEqualTo("configuration");
			}
		}
		// Audited on each instance that applied it: who, what, from what to what.
		String audit = "Live override of bucket 'api' by anonymous at ";
		assertThat(output.getOut().split(audit, -1)).as("audit lines").hasSizeGreaterThanOrEqualTo(4);
		assertThat(output.getOut()).contains(
				"{limit=3, window=1h}: limits [10/10s sliding-window-counter segments=10] -> [3/1h sliding-window-counter segments=10]");
		assertThat(output.getOut()).contains("Live override of bucket 'api' cleared by anonymous: limits");
	}

	private static SampleInstance start(String name, String... args) {
		String[] all = new String[args.length + 1];
		all[0] = "--management.endpoint.ratelimits.access=unrestricted";
		System.arraycopy(args, 0, all, 1, args.length);
		return SampleInstance.redis(name, redis, List.of(), (context) -> {
		}, all);
	}

	private static String listing(SampleInstance instance) {
		HttpResponse<String> response = instance.get("/actuator/ratelimits");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return response.body();
	}

	private static long limitOf(SampleInstance instance, String bucket) {
		List<Number> limits = JsonPath.read(listing(instance),
				"$.buckets[?(@.name == '" + bucket + "')].limits[0].limit");
		assertThat(limits).hasSize(1);
		return limits.get(0).longValue();
	}

	private static String sourceOf(SampleInstance instance, String bucket) {
		List<String> sources = JsonPath.read(listing(instance), "$.buckets[?(@.name == '" + bucket + "')].source");
		assertThat(sources).hasSize(1);
		return sources.get(0);
	}

	private static void awaitCondition(String what, BooleanSupplier condition) {
		Await.until(what, PROPAGATION_BOUND, condition);
	}

}
