package io.github.ratelimit.sample;

import java.util.ArrayList;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.servlet.MockMvc;

import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code GET /api/partner}: {@code PartnerClient} may call the partner twice per second
 * ({@code onLimit = WAIT}, {@code maxWait = "3s"}): a third quick call waits for the next
 * permit instead of failing, and the endpoint counts it as {@code waited}, not
 * {@code rejected}. Waiting sleeps on the system clock, so this test runs on the sample's
 * own store and clock.
 */
@SpringBootTest(webEnvironment = WebEnvironment.MOCK)
@AutoConfigureMockMvc
class PartnerEndpointTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private RateLimitStore store;

	@Autowired
	private BucketRegistry registry;

	@Test
	void thirdQuickCallWaitsInsteadOfFailing() throws Exception {
		// Warm up the request path, so that the calls below follow each other quickly.
		this.mvc.perform(get("/api/greeting")).andExpect(status().isOk());
		BucketDefinition partner = this.registry.find("partner");
		assertThat(partner).isNotNull();
		this.store.reset("partner", "", partner.limits());
		String before = this.mvc.perform(get("/actuator/ratelimits")).andReturn().getResponse().getContentAsString();
		List<Long> waited = new ArrayList<>();
		long started = System.nanoTime();
		for (int i = 0; i < 3; i++) {
			String body = this.mvc.perform(get("/api/partner"))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.response").isNotEmpty())
				.andExpect(header().doesNotExist("Retry-After"))
				.andReturn()
				.getResponse()
				.getContentAsString();
			waited.add(((Number) JsonPath.read(body, "$.waitedMs")).longValue());
		}
		long elapsedMs = (System.nanoTime() - started) / 1_000_000;
		// 2 permits at once, the next one 500ms after the first call.
		assertThat(waited.get(2)).as("waitedMs of the third call, all %s", waited).isPositive().isLessThan(3000);
		assertThat(elapsedMs).as("three calls at 2 per second").isGreaterThanOrEqualTo(450);
		// The third call waits unless the machine was so slow that its permit had come
		// back already: either way, every call went through and none is a rejection.
		String after = this.mvc.perform(get("/actuator/ratelimits")).andReturn().getResponse().getContentAsString();
		long allowed = count(after, "allowed") - count(before, "allowed");
		long waitedCalls = count(after, "waited") - count(before, "waited");
		assertThat(allowed + waitedCalls).as("allowed %s, waited %s", allowed, waitedCalls).isEqualTo(3);
		assertThat(count(after, "rejected") - count(before, "rejected")).as("no call was rejected").isZero();
	}

	private static long count(String body, String field) {
		return EndpointJson.bucketCount(body, "partner", field);
	}

}
