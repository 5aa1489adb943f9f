package io.github.ratelimit.sample;

import java.util.List;

import com.jayway.jsonpath.JsonPath;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code GET /api/search}: bucket {@code search} (3 per minute per client IP) runs in
 * shadow mode: requests over the limit pass and are counted as {@code shadow_rejected} by
 * the {@code ratelimits} endpoint and the {@code ratelimit.decisions} meter.
 */
class SearchEndpointTests extends ManualClockMockMvcTests {

	@Autowired
	private MeterRegistry meterRegistry;

	@Test
	void overTheLimitIsNeverRejected() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(get("/api/search").param("q", "limits").with(from("10.0.4.1")))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.query").value("limits"))
				.andExpect(header().doesNotExist("Retry-After"))
				// A limit that is not enforced is not advertised to clients.
				.andExpect(header().doesNotExist("RateLimit"))
				.andExpect(header().doesNotExist("RateLimit-Policy"));
		}
	}

	@Test
	void endpointAndMetricsCountShadowRejections() throws Exception {
		Counts before = counts();
		for (int i = 0; i < 7; i++) {
			this.mvc.perform(get("/api/search").with(from("10.0.4.2"))).andExpect(status().isOk());
		}
		Counts after = counts();
		assertThat(after.allowed() - before.allowed()).isEqualTo(3);
		assertThat(after.shadowRejected() - before.shadowRejected()).isEqualTo(4);
		assertThat(after.rejected()).isEqualTo(before.rejected()).isZero();
		assertThat(after.meterShadowRejected() - before.meterShadowRejected()).isEqualTo(4);
		assertThat(after.meterAllowed() - before.meterAllowed()).isEqualTo(3);
	}

	@Test
	void endpointListsTheBucketAsShadow() throws Exception {
		this.mvc.perform(get("/actuator/ratelimits"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.buckets[?(@.name == 'search')].mode").value("shadow"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'search')].limits[0].limit").value(3))
			.andExpect(jsonPath("$.buckets[?(@.name == 'search')].limits[0].window").value("1m"));
	}

	@Test
	void metricsEndpointReportsShadowRejections() throws Exception {
		double before = shadowRejectedMetric();
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/search").with(from("10.0.4.3"))).andExpect(status().isOk());
		}
		assertThat(shadowRejectedMetric() - before).isEqualTo(2);
	}

	private double shadowRejectedMetric() throws Exception {
		String body = this.mvc
			.perform(get("/actuator/metrics/ratelimit.decisions").param("tag", "bucket:search")
				.param("tag", "outcome:shadow_rejected"))
			.andReturn()
			.getResponse()
			.getContentAsString();
		if (body.isEmpty()) {
			// 404: no search decision yet.
			return 0;
		}
		List<Number> counts = JsonPath.read(body, "$.measurements[?(@.statistic == 'COUNT')].value");
		assertThat(counts).hasSize(1);
		return counts.get(0).doubleValue();
	}

	private Counts counts() throws Exception {
		String body = this.mvc.perform(get("/actuator/ratelimits"))
			.andExpect(status().isOk())
			.andReturn()
			.getResponse()
			.getContentAsString();
		return new Counts(EndpointJson.bucketCount(body, "search", "allowed"),
				EndpointJson.bucketCount(body, "search", "rejected"),
				EndpointJson.bucketCount(body, "search", "shadowRejected"), meter("allowed"), meter("shadow_rejected"));
	}

	private double meter(String outcome) {
		Counter counter = this.meterRegistry.find("ratelimit.decisions")
			.tags("bucket", "search", "outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private record Counts(long allowed, long rejected, long shadowRejected, double meterAllowed,
			double meterShadowRejected) {
	}

}
