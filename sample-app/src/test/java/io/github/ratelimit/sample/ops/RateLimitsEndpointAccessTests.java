package io.github.ratelimit.sample.ops;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.aop.operation.InvalidRateLimitedException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * What an anonymous client can do with the {@code ratelimits} endpoint of a sample
 * application started as an operator starts it, over real HTTP: read, but neither reset a
 * key nor change a limit until the application opens the endpoint
 * ({@code management.endpoint.ratelimits.access=unrestricted}), and limit changes only
 * with {@code ratelimit.endpoint.limits-write-enabled} as well; a change is refused, and
 * nothing changes, when a field is unknown or when startup would refuse the limits it
 * makes.
 */
class RateLimitsEndpointAccessTests {

	private static final String EXPOSED = "--management.endpoints.web.exposure.include=ratelimits";

	private static final String UNRESTRICTED = "--management.endpoint.ratelimits.access=unrestricted";

	private static final String WRITABLE = "--ratelimit.endpoint.limits-write-enabled=true";

	@Test
	void aFreshSampleRefusesAnonymousResetsAndLimitChangesAndStillServesReads() {
		try (SampleInstance app = SampleInstance.memory("fresh", List.of(), EXPOSED)) {
			// Rounds of 5 wrong passwords, each followed by a reset: the limit holds.
			for (int round = 0; round < 4; round++) {
				for (int attempt = 0; attempt < 5; attempt++) {
					assertThat(wrongPassword(app, "alice")).as("round %d", round).isEqualTo((round == 0) ? 401 : 429);
				}
				assertThat(app.send("DELETE", "/actuator/ratelimits/login/alice", null).statusCode()).isEqualTo(405);
			}
			assertThat(app.send("POST", "/actuator/ratelimits/api", "{\"limit\": 3}").statusCode()).isEqualTo(404);
			assertThat(app.send("DELETE", "/actuator/ratelimits/api", null).statusCode()).isEqualTo(404);
			HttpResponse<String> alice = app.get("/actuator/ratelimits/login/alice");
			assertThat(alice.statusCode()).isEqualTo(200);
			assertThat(JsonPath.<Integer>read(alice.body(), "$.remaining")).isZero();
			assertThat(limitOf(app, "api")).isEqualTo(10);
		}
	}

	@Test
	void anOpenedEndpointResetsAKeyAndKeepsLimitChangesBehindTheirOwnSwitch() {
		try (SampleInstance app = SampleInstance.memory("unrestricted", List.of(), EXPOSED, UNRESTRICTED)) {
			for (int attempt = 0; attempt < 5; attempt++) {
				assertThat(wrongPassword(app, "alice")).isEqualTo(401);
			}
			assertThat(wrongPassword(app, "alice")).isEqualTo(429);
			assertThat(app.send("DELETE", "/actuator/ratelimits/login/alice", null).statusCode()).isEqualTo(204);
			assertThat(wrongPassword(app, "alice")).isEqualTo(401);
			HttpResponse<String> change = app.send("POST", "/actuator/ratelimits/api", "{\"limit\": 3}");
			assertThat(change.statusCode()).isEqualTo(403);
			assertThat(change.body()).contains("ratelimit.endpoint.limits-write-enabled=true");
		}
	}

	@Test
	void aChangeWithAnUnknownFieldOrLimitsTheLoginCannotWorkWithIsRefusedAndNothingChanges() {
		String startup = startupFailure("--ratelimit.buckets.login.algorithm=leaky-bucket");
		// As the README quotes it.
		assertThat(startup).isEqualTo("@RateLimited(refundWhen) on LoginService.login(String, String): bucket 'login'"
				+ " uses LEAKY_BUCKET, whose slots cannot be given back once handed out ([5/1m leaky-bucket]); remove"
				+ " refundWhen '#result' or choose another algorithm");
		try (SampleInstance app = SampleInstance.memory("writable", List.of(), EXPOSED, UNRESTRICTED, WRITABLE)) {
			HttpResponse<String> misspelt = app.send("POST", "/actuator/ratelimits/api",
					"{\"limit\": 3, \"widnow\": \"1m\"}");
			assertThat(misspelt.statusCode()).isEqualTo(400);
			assertThat(JsonPath.<String>read(misspelt.body(), "$.message")).isEqualTo(
					"ratelimit.buckets.api.widnow: not a limit setting; use limit, window, burst, segments, penalty,"
							+ " calendar, zone, algorithm or index");
			HttpResponse<String> leaky = app.send("POST", "/actuator/ratelimits/login",
					"{\"algorithm\": \"leaky-bucket\"}");
			assertThat(leaky.statusCode()).isEqualTo(400);
			assertThat(JsonPath.<String>read(leaky.body(), "$.message")).isEqualTo(startup);
			String listing = app.get("/actuator/ratelimits").body();
			assertThat(JsonPath.<Object>read(listing, "$.overrides")).asString().isEqualTo("{}");
			assertThat(limitOf(app, "api")).isEqualTo(10);
		}
	}

	private static int wrongPassword(SampleInstance app, String username) {
		return app.send("POST", "/login", "{\"username\": \"" + username + "\", \"password\": \"wrong\"}").statusCode();
	}

	private static long limitOf(SampleInstance app, String bucket) {
		List<Number> limits = JsonPath.read(app.get("/actuator/ratelimits").body(),
				"$.buckets[?(@.name == '" + bucket + "')].limits[0].limit");
		assertThat(limits).hasSize(1);
		return limits.get(0).longValue();
	}

	/**
	 * Returns the message with which the sample refuses to start with these arguments.
	 */
	private static String startupFailure(String... args) {
		List<Throwable> causes = new ArrayList<>();
		assertThatException().isThrownBy(() -> SampleInstance.memory("refused", List.of(), args).close())
			.satisfies((ex) -> {
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

}
