package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code ratelimit.headers=none}: no limit headers, but a 429 still has
 * {@code Retry-After} and its problem body.
 */
@TestPropertySource(properties = "ratelimit.headers=none")
class NoHeadersTests extends ManualClockMockMvcTests {

	@Test
	void noLimitHeadersButRetryAfterOn429() throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.10.1")))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit"))
				.andExpect(header().doesNotExist("RateLimit-Policy"))
				.andExpect(header().doesNotExist("X-RateLimit-Limit"))
				.andExpect(header().doesNotExist("X-RateLimit-Remaining"))
				.andExpect(header().doesNotExist("X-RateLimit-Reset"));
		}
		this.mvc.perform(get("/api/greeting").with(from("10.0.10.1")))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "10"))
			.andExpect(header().string("Content-Type", "application/problem+json"))
			.andExpect(header().doesNotExist("RateLimit"))
			.andExpect(header().doesNotExist("RateLimit-Policy"))
			.andExpect(header().doesNotExist("X-RateLimit-Limit"))
			.andExpect(jsonPath("$.status").value(429))
			.andExpect(jsonPath("$['violated-policies'][0]").value("api"));
	}

	@Test
	void annotatedEndpointRejectionHasRetryAfterOnly() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(post("/login").formField("username", "mallory").formField("password", "wrong"))
				.andExpect(status().isUnauthorized())
				.andExpect(header().doesNotExist("RateLimit"));
		}
		this.mvc.perform(post("/login").formField("username", "mallory").formField("password", "wrong"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "60"))
			.andExpect(header().doesNotExist("RateLimit"))
			.andExpect(header().doesNotExist("X-RateLimit-Remaining"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("login"));
	}

}
