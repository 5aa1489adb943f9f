package io.github.ratelimit.sample;

import java.util.List;
import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.annotation.RateLimited;

/**
 * {@code GET /api/search}: bucket {@code search} runs in shadow mode
 * ({@code application.yml}): requests over the limit are counted and reported in headers,
 * never rejected. Switch it on with {@code --ratelimit.buckets.search.mode=enforce}.
 */
@RestController
class SearchController {

	@GetMapping("/api/search")
	@RateLimited(bucket = "search", key = "#clientIp")
	Map<String, Object> search(@RequestParam(defaultValue = "") String q) {
		return Map.of("query", q, "results", List.of());
	}

}
