package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.nullValue;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code /actuator/ratelimits} as the sample exposes it: read-only, the endpoint's
 * default access.
 */
class RateLimitsEndpointTests extends ManualClockMockMvcTests {

	@Test
	void listsTheStoreAndEveryBucket() throws Exception {
		this.mvc.perform(get("/actuator/ratelimits"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.store.name").value("memory"))
			.andExpect(jsonPath("$.store.failureMode").value("fallback"))
			.andExpect(jsonPath("$.store.state").value("healthy"))
			.andExpect(
					jsonPath("$.buckets[*].name", hasItems("api", "login", "reports", "partner", "quotes", "search")))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].source").value("configuration"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].mode").value("enforce"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].limits[0].algorithm").value("sliding-window-counter"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].limits[0].limit").value(10))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].limits[0].window").value("10s"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].source").value("annotation"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].limits[0].algorithm").value("sliding-log"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].limits[0].limit").value(5))
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].limits[0].window").value("1m"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'reports')].limits[0].algorithm").value("gcra"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'reports')].limits[0].window").value("1m"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'partner')].limits[0].algorithm").value("token-bucket"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'partner')].limits[0].limit").value(2))
			.andExpect(jsonPath("$.buckets[?(@.name == 'partner')].limits[0].window").value("1s"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'partner')].limits[0].burst").value(2))
			.andExpect(jsonPath("$.buckets[?(@.name == 'quotes')].limits[0].algorithm").value("fixed-window"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'quotes')].limits[0].limit").value(3))
			.andExpect(jsonPath("$.buckets[?(@.name == 'quotes')].limits[0].window").value("10s"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'search')].mode").value("shadow"));
	}

	@Test
	void aBucketWithAPerCallLimitIsShownAndReadAsSuch() throws Exception {
		for (int i = 0; i < 6; i++) {
			this.mvc.perform(get("/api/reports").header("X-Api-Key", "demo-free"));
		}
		this.mvc.perform(get("/actuator/ratelimits"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'reports')].limitPerCall").value("@plans.limitFor(#apiKey)"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'reports')].limits[0].limit").value(contains(nullValue())))
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].limitPerCall").value(contains(nullValue())));
		this.mvc.perform(get("/actuator/ratelimits/reports/demo-free"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.limitPerCall").value("@plans.limitFor(#apiKey)"))
			.andExpect(jsonPath("$.allowed").value(nullValue()))
			.andExpect(jsonPath("$.remaining").value(nullValue()));
		this.mvc.perform(get("/actuator/ratelimits/reports/demo-free").param("limit", "5"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.allowed").value(false))
			.andExpect(jsonPath("$.remaining").value(0))
			.andExpect(jsonPath("$.limits[0].limit.limit").value(5));
		this.mvc.perform(get("/actuator/ratelimits/login/bob").param("limit", "5")).andExpect(status().isBadRequest());
	}

	@Test
	void countsAllowedAndRejectedRequestsPerBucket() throws Exception {
		String before = this.mvc.perform(get("/actuator/ratelimits")).andReturn().getResponse().getContentAsString();
		long allowed = EndpointJson.bucketCount(before, "api", "allowed");
		long rejected = EndpointJson.bucketCount(before, "api", "rejected");
		for (int i = 0; i < 12; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.5.1")));
		}
		String after = this.mvc.perform(get("/actuator/ratelimits")).andReturn().getResponse().getContentAsString();
		assertThat(EndpointJson.bucketCount(after, "api", "allowed") - allowed).isEqualTo(10);
		assertThat(EndpointJson.bucketCount(after, "api", "rejected") - rejected).isEqualTo(2);
	}

	@Test
	void readsOneKeyWithoutTakingAPermit() throws Exception {
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.5.2"))).andExpect(status().isOk());
		}
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/actuator/ratelimits/api/10.0.5.2"))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.bucket").value("api"))
				.andExpect(jsonPath("$.key").value("10.0.5.2"))
				.andExpect(jsonPath("$.allowed").value(true))
				.andExpect(jsonPath("$.remaining").value(7))
				.andExpect(jsonPath("$.retryAfterMillis").value(0))
				.andExpect(jsonPath("$.resetAfterMillis").value(10_000))
				.andExpect(jsonPath("$.limits[0].limit.algorithm").value("sliding-window-counter"))
				.andExpect(jsonPath("$.limits[0].limit.limit").value(10))
				.andExpect(jsonPath("$.limits[0].remaining").value(7));
		}
		// The reads took nothing: 7 more requests pass, the 8th does not.
		for (int i = 0; i < 7; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.5.2"))).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/greeting").with(from("10.0.5.2"))).andExpect(status().isTooManyRequests());
		this.mvc.perform(get("/actuator/ratelimits/api/10.0.5.2"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.allowed").value(false))
			.andExpect(jsonPath("$.remaining").value(0))
			.andExpect(jsonPath("$.retryAfterMillis").value(10_000));
	}

	@Test
	void readsAnUnusedKeyAsFull() throws Exception {
		this.mvc.perform(get("/actuator/ratelimits/login/nobody"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.allowed").value(true))
			.andExpect(jsonPath("$.remaining").value(5))
			.andExpect(jsonPath("$.retryAfterMillis").value(0));
	}

	@Test
	void unknownBucketIs404() throws Exception {
		this.mvc.perform(get("/actuator/ratelimits/no-such-bucket/someone")).andExpect(status().isNotFound());
	}

	@Test
	void resetIsRefusedByDefault() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.5.3"))).andExpect(status().isOk());
		}
		this.mvc.perform(delete("/actuator/ratelimits/api/10.0.5.3")).andExpect(status().isMethodNotAllowed());
		this.mvc.perform(get("/api/greeting").with(from("10.0.5.3"))).andExpect(status().isTooManyRequests());
		this.mvc.perform(get("/actuator/ratelimits/api/10.0.5.3"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.remaining").value(0));
	}

}
