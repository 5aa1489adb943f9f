package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code GET /rate-limit}, which the sample turns on: a client reads its own state under
 * the {@code api} rule without spending a permit, and sees each request it makes.
 */
class StatusEndpointTests extends ManualClockMockMvcTests {

	@Test
	void aClientReadsItsOwnRemainingWithoutSpendingIt() throws Exception {
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/rate-limit").with(from("10.0.9.1")))
				.andExpect(status().isOk())
				.andExpect(header().string("Cache-Control", "no-store"))
				.andExpect(jsonPath("$.limits[0].bucket").value("api"))
				.andExpect(jsonPath("$.limits[0].limit").value(10))
				.andExpect(jsonPath("$.limits[0].remaining").value(10));
		}
		this.mvc.perform(get("/api/greeting").with(from("10.0.9.1"))).andExpect(status().isOk());
		this.mvc.perform(get("/rate-limit").with(from("10.0.9.1")))
			.andExpect(jsonPath("$.limits[0].remaining").value(9));
		this.mvc.perform(get("/rate-limit").with(from("10.0.9.2")))
			.andExpect(jsonPath("$.limits[0].remaining").value(10));
	}

}
