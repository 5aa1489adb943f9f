package io.github.ratelimit.readme;

import java.util.List;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;

@RestController
public class ReportsController {

	// Per API key, as many reports per minute as the customer's plan allows.
	@GetMapping("/api/reports")
	@RateLimited(bucket = "reports", key = "#apiKey", limitExpression = "@plans.limitFor(#apiKey)", window = "1m",
			algorithm = Algorithm.GCRA)
	public List<String> reports(@RequestHeader("X-Api-Key") String apiKey) {
		return List.of("daily", "weekly");
	}

}
