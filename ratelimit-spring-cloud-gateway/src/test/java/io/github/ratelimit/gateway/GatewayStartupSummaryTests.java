package io.github.ratelimit.gateway;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The startup summary of a gateway names the routes that use each bucket: the routes are
 * built while the context is refreshed, by a listener of the refresh, so the summary is
 * logged once the application has started. Before, every bucket a route used was reported
 * as used by nothing. (A route that names no bucket, and so uses the one named like it,
 * is known to use it from its first request.) A context of its own (its own property), so
 * that its startup is in this class's output; Spring closes it with the others, at the
 * end.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.application.name=startup-summary")
@ActiveProfiles("routes")
@ExtendWith(OutputCaptureExtension.class)
class GatewayStartupSummaryTests {

	private static final Backend backend = Backend.start();

	@DynamicPropertySource
	static void backend(DynamicPropertyRegistry registry) {
		registry.add("backend.uri", backend::uri);
	}

	@AfterAll
	static void stopBackend() {
		backend.close();
	}

	@Test
	void theSummaryNamesTheRoutesThatUseEachBucket(CapturedOutput output) {
		assertThat(output).containsOnlyOnce("Rate limiting: store in-memory")
			.contains("[ratelimit.buckets.api, used by route 'api' (RequestRateLimiter)]")
			.contains("[ratelimit.buckets.reports, used by route 'reports' (RequestRateLimiter)]")
			.doesNotContain("ratelimit.buckets.api is used by no annotation");
	}

	@Test
	void aMisspeltArgumentIsWarnedOfWithTheOneItLikelyMeant(CapturedOutput output) {
		assertThat(output).contains("Route 'misspelt': RequestRateLimiter argument ratelimit.concurency names no "
				+ "setting and is ignored; did you mean ratelimit.concurrency? The arguments are ratelimit.bucket, "
				+ "ratelimit.cost, ratelimit.settle, ratelimit.concurrency, ratelimit.concurrency-lease.");
	}

}
