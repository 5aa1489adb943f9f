package io.github.ratelimit.sample;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/quote}: a fresh quote, or a cached one once the quota is used
 * ({@code fallbackMethod}).
 */
@RestController
class QuoteController {

	private final QuoteService quoteService;

	QuoteController(QuoteService quoteService) {
		this.quoteService = quoteService;
	}

	@GetMapping("/api/quote")
	QuoteService.Quote quote() {
		return this.quoteService.quote();
	}

}
