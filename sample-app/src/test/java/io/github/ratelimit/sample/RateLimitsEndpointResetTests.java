package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.ResultActions;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code DELETE /actuator/ratelimits/{bucket}/{key}} with
 * {@code management.endpoint.ratelimits.access=unrestricted}: an operator lifts one
 * client's limit.
 */
@TestPropertySource(properties = "management.endpoint.ratelimits.access=unrestricted")
class RateLimitsEndpointResetTests extends ManualClockMockMvcTests {

	@Test
	void resetLiftsTheLimitOfOneClient() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.6.1"))).andExpect(status().isOk());
			this.mvc.perform(get("/api/greeting").with(from("10.0.6.2"))).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/greeting").with(from("10.0.6.1"))).andExpect(status().isTooManyRequests());
		this.mvc.perform(delete("/actuator/ratelimits/api/10.0.6.1")).andExpect(status().isNoContent());
		this.mvc.perform(get("/api/greeting").with(from("10.0.6.1")))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"api\";r=9;t=10"));
		// Only that key.
		this.mvc.perform(get("/api/greeting").with(from("10.0.6.2"))).andExpect(status().isTooManyRequests());
	}

	@Test
	void resetLiftsALoginLimit() throws Exception {
		for (int i = 0; i < 5; i++) {
			login("mallory").andExpect(status().isUnauthorized());
		}
		login("mallory").andExpect(status().isTooManyRequests());
		this.mvc.perform(delete("/actuator/ratelimits/login/mallory")).andExpect(status().isNoContent());
		this.mvc.perform(get("/actuator/ratelimits/login/mallory"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.remaining").value(5));
		login("mallory").andExpect(status().isUnauthorized());
	}

	@Test
	void resetOfAnUnknownBucketIs404() throws Exception {
		// A typo in the bucket name must not look like a successful reset.
		this.mvc.perform(delete("/actuator/ratelimits/no-such-bucket/someone")).andExpect(status().isNotFound());
	}

	private ResultActions login(String username) throws Exception {
		return this.mvc.perform(post("/login").formField("username", username).formField("password", "wrong"));
	}

}
