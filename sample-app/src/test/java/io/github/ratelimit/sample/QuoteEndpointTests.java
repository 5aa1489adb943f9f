package io.github.ratelimit.sample;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code GET /api/quote}: {@code QuoteService} computes 3 quotes per 10 seconds (fixed
 * window, one limit for everyone); past that its {@code fallbackMethod} answers with a
 * cached quote instead of a 429.
 */
class QuoteEndpointTests extends ManualClockMockMvcTests {

	private static final String CACHED_QUOTE = "Simplicity is prerequisite for reliability.";

	@Test
	void threeFreshQuotesThenTheCachedOne() throws Exception {
		for (int i = 1; i <= 3; i++) {
			this.mvc.perform(get("/api/quote"))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.cached").value(false))
				.andExpect(jsonPath("$.text").isNotEmpty())
				.andExpect(header().string("RateLimit-Policy", "\"quotes\";q=3;w=10"))
				.andExpect(header().string("RateLimit", "\"quotes\";r=" + (3 - i) + ";t=10"));
		}
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/quote"))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.cached").value(true))
				.andExpect(jsonPath("$.text").value(CACHED_QUOTE))
				.andExpect(header().string("RateLimit", "\"quotes\";r=0;t=10"))
				.andExpect(header().doesNotExist("Retry-After"));
		}
	}

	@Test
	void limitIsSharedByAllClients() throws Exception {
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/quote").with(from("10.0.3." + i))).andExpect(jsonPath("$.cached").value(false));
		}
		this.mvc.perform(get("/api/quote").with(from("10.0.3.99"))).andExpect(jsonPath("$.cached").value(true));
	}

	@Test
	void freshQuotesAgainInTheNextWindow() throws Exception {
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/quote")).andExpect(jsonPath("$.cached").value(false));
		}
		advance(Duration.ofMillis(9_999));
		this.mvc.perform(get("/api/quote")).andExpect(jsonPath("$.cached").value(true));
		advance(Duration.ofMillis(1));
		this.mvc.perform(get("/api/quote"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.cached").value(false))
			.andExpect(header().string("RateLimit", "\"quotes\";r=2;t=10"));
	}

}
