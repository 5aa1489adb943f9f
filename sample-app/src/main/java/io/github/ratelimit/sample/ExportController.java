package io.github.ratelimit.sample;

import java.io.IOException;
import java.util.Map;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /v1/exports/{tenant}}: an expensive export, at most 5 per tenant in flight
 * ({@link ExportService}); a request that finds no slot within 30 seconds gets 429.
 */
@RestController
class ExportController {

	private final ExportService exports;

	ExportController(ExportService exports) {
		this.exports = exports;
	}

	@PostMapping("/v1/exports/{tenant}")
	Map<String, String> export(@PathVariable String tenant) throws IOException, InterruptedException {
		return Map.of("tenant", tenant, "export", this.exports.export(tenant));
	}

}
