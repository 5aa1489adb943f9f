package io.github.ratelimit.sample;

import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/partner}: waits for the partner's quota ({@link PartnerClient}) and
 * says how long it waited.
 */
@RestController
class PartnerController {

	private final PartnerClient partnerClient;

	PartnerController(PartnerClient partnerClient) {
		this.partnerClient = partnerClient;
	}

	@GetMapping("/api/partner")
	Map<String, Object> partner() {
		long started = System.nanoTime();
		String quote = this.partnerClient.fetchQuote();
		return Map.of("response", quote, "waitedMs", (System.nanoTime() - started) / 1_000_000);
	}

}
