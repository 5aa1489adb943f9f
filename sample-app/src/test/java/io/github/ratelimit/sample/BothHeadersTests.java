package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code ratelimit.headers=both}: the draft's fields and {@code X-RateLimit-*}.
 */
@TestPropertySource(properties = "ratelimit.headers=both")
class BothHeadersTests extends ManualClockMockMvcTests {

	@Test
	void allowedAndRejectedResponsesCarryBothKinds() throws Exception {
		for (int i = 1; i <= 10; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.9.1")))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"api\";q=10;w=10"))
				.andExpect(header().string("RateLimit", "\"api\";r=" + (10 - i) + ";t=10"))
				.andExpect(header().string("X-RateLimit-Limit", "10"))
				.andExpect(header().string("X-RateLimit-Remaining", String.valueOf(10 - i)))
				.andExpect(header().string("X-RateLimit-Reset", "10"));
		}
		this.mvc.perform(get("/api/greeting").with(from("10.0.9.1")))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "10"))
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=10;w=10"))
			.andExpect(header().string("RateLimit", "\"api\";r=0;t=10"))
			.andExpect(header().string("X-RateLimit-Limit", "10"))
			.andExpect(header().string("X-RateLimit-Remaining", "0"))
			.andExpect(header().string("X-RateLimit-Reset", "10"));
	}

}
