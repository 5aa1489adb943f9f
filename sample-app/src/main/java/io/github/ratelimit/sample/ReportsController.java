package io.github.ratelimit.sample;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.annotation.RateLimited;

/**
 * {@code GET /api/reports}: limited per {@code X-Api-Key}, with the limit of the key's
 * plan ({@link Plans}). Calls without a key are not limited here; they get 401.
 */
@RestController
class ReportsController {

	private final Plans plans;

	ReportsController(Plans plans) {
		this.plans = plans;
	}

	@GetMapping("/api/reports")
	@RateLimited(bucket = "reports", key = "#apiKey", limitExpression = "@plans.limitFor(#apiKey)",
			skipWhen = "#apiKey == null")
	ResponseEntity<Map<String, Object>> reports(
			@RequestHeader(name = "X-Api-Key", required = false) @Nullable String apiKey) {
		if (!this.plans.isKnown(apiKey)) {
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("error", "unknown or missing X-Api-Key"));
		}
		return ResponseEntity.ok(Map.of("plan", this.plans.limitFor(apiKey) + " per minute", "reports",
				List.of("daily-sales", "weekly-signups")));
	}

}
