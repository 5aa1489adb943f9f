package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code ratelimit.headers=legacy}: {@code X-RateLimit-*} instead of the draft's fields.
 */
@TestPropertySource(properties = "ratelimit.headers=legacy")
class LegacyHeadersTests extends ManualClockMockMvcTests {

	@Test
	void allowedAndRejectedResponsesCarryLegacyHeadersOnly() throws Exception {
		for (int i = 1; i <= 10; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.8.1")))
				.andExpect(status().isOk())
				.andExpect(header().string("X-RateLimit-Limit", "10"))
				.andExpect(header().string("X-RateLimit-Remaining", String.valueOf(10 - i)))
				.andExpect(header().string("X-RateLimit-Reset", "10"))
				.andExpect(header().doesNotExist("RateLimit"))
				.andExpect(header().doesNotExist("RateLimit-Policy"));
		}
		this.mvc.perform(get("/api/greeting").with(from("10.0.8.1")))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "10"))
			.andExpect(header().string("X-RateLimit-Limit", "10"))
			.andExpect(header().string("X-RateLimit-Remaining", "0"))
			.andExpect(header().string("X-RateLimit-Reset", "10"))
			.andExpect(header().doesNotExist("RateLimit"))
			.andExpect(header().doesNotExist("RateLimit-Policy"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("api"));
	}

	@Test
	void annotatedEndpointsCarryLegacyHeadersToo() throws Exception {
		this.mvc.perform(post("/login").formField("username", "mallory").formField("password", "wrong"))
			.andExpect(status().isUnauthorized())
			.andExpect(header().string("X-RateLimit-Limit", "5"))
			.andExpect(header().string("X-RateLimit-Remaining", "4"))
			.andExpect(header().string("X-RateLimit-Reset", "60"))
			.andExpect(header().doesNotExist("RateLimit"));
	}

}
