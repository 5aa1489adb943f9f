package io.github.ratelimit.gateway;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The startup summary of a gateway names the routes that use each bucket: the routes are
 * built while the context is refreshed, by a listener of the refresh, so the summary is
 * logged once the application has started. Before, every bucket a route used was reported
 * as used by nothing.
 */
@ExtendWith(OutputCaptureExtension.class)
class GatewayStartupSummaryTests {

	@Test
	void theSummaryNamesTheRoutesThatUseEachBucket(CapturedOutput output) {
		Backend backend = Backend.start();
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GatewayTestApplication.class,
				OwnReactorResources.class)
			.profiles("routes")
			.run("--server.port=0", "--backend.uri=" + backend.uri(), "--spring.main.banner-mode=off")) {
			assertThat(context.getBean(BucketRateLimiter.class)).isNotNull();
			assertThat(output).containsOnlyOnce("Rate limiting: store in-memory")
				.contains("[ratelimit.buckets.api, used by route 'api' (RequestRateLimiter)]")
				.contains("[ratelimit.buckets.reports, used by route 'reports' (RequestRateLimiter)]")
				.doesNotContain("ratelimit.buckets.api is used by no annotation");
		}
		finally {
			backend.close();
		}
	}

}
