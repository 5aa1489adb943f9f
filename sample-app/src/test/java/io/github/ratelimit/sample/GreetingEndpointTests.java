package io.github.ratelimit.sample;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.test.web.servlet.MvcResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code GET /api/greeting}: the filter rule of bucket {@code api}, 10 requests per 10
 * seconds per client IP (sliding window counter).
 */
class GreetingEndpointTests extends ManualClockMockMvcTests {

	static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

	@Test
	void allowsTenRequestsPerClientWithDraftHeaders() throws Exception {
		for (int i = 1; i <= 10; i++) {
			this.mvc.perform(get("/api/greeting").param("name", "Ada").with(from("10.0.1.1")))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.greeting").value("Hello, Ada!"))
				.andExpect(header().string("RateLimit-Policy", "\"api\";q=10;w=10"))
				.andExpect(header().string("RateLimit", "\"api\";r=" + (10 - i) + ";t=10"))
				.andExpect(header().doesNotExist("Retry-After"))
				.andExpect(header().doesNotExist("X-RateLimit-Limit"));
		}
	}

	@Test
	void eleventhRequestGets429ProblemWithRetryAfterAndHeaders() throws Exception {
		exhaust("10.0.1.2");
		this.mvc.perform(get("/api/greeting").with(from("10.0.1.2")))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "10"))
			.andExpect(header().string("Content-Type", "application/problem+json"))
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=10;w=10"))
			.andExpect(header().string("RateLimit", "\"api\";r=0;t=10"))
			.andExpect(jsonPath("$.type").value(QUOTA_EXCEEDED))
			.andExpect(jsonPath("$.title").value(QUOTA_EXCEEDED_TITLE))
			.andExpect(jsonPath("$.status").value(429))
			.andExpect(jsonPath("$.detail").value("Rate limit 'api' exceeded; retry after 10 seconds."))
			.andExpect(jsonPath("$.instance").value("/api/greeting"))
			.andExpect(jsonPath("$['violated-policies']", contains("api")))
			.andExpect(jsonPath("$.greeting").doesNotExist());
	}

	@Test
	void clientThatWaitsRetryAfterIsAllowedAgain() throws Exception {
		exhaust("10.0.1.3");
		MvcResult rejected = this.mvc.perform(get("/api/greeting").with(from("10.0.1.3")))
			.andExpect(status().isTooManyRequests())
			.andReturn();
		long retryAfter = Long.parseLong(rejected.getResponse().getHeader("Retry-After"));
		assertThat(retryAfter).isGreaterThanOrEqualTo(1);
		// Retry-After is rounded up: one second less is too early.
		advance(Duration.ofSeconds(retryAfter - 1));
		this.mvc.perform(get("/api/greeting").with(from("10.0.1.3"))).andExpect(status().isTooManyRequests());
		advance(Duration.ofSeconds(1));
		this.mvc.perform(get("/api/greeting").with(from("10.0.1.3")))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.greeting").value("Hello, world!"))
			.andExpect(header().exists("RateLimit"));
	}

	@Test
	void eachClientAddressHasItsOwnLimit() throws Exception {
		exhaust("10.0.1.4");
		this.mvc.perform(get("/api/greeting").with(from("10.0.1.4"))).andExpect(status().isTooManyRequests());
		this.mvc.perform(get("/api/greeting").with(from("10.0.1.5")))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"api\";r=9;t=10"));
	}

	@Test
	void rejectedRequestsDoNotExtendTheWait() throws Exception {
		exhaust("10.0.1.6");
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.1.6")))
				.andExpect(status().isTooManyRequests())
				.andExpect(header().string("Retry-After", "10"));
		}
		advance(Duration.ofSeconds(10));
		this.mvc.perform(get("/api/greeting").with(from("10.0.1.6"))).andExpect(status().isOk());
	}

	private void exhaust(String address) throws Exception {
		for (int i = 0; i < 10; i++) {
			this.mvc.perform(get("/api/greeting").with(from(address))).andExpect(status().isOk());
		}
	}

}
