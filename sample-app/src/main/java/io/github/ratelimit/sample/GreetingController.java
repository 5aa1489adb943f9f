package io.github.ratelimit.sample;

import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/greeting}: limited by the filter rule of bucket {@code api} in
 * {@code application.yml}, per client IP. No rate limiting code here.
 */
@RestController
class GreetingController {

	@GetMapping("/api/greeting")
	Map<String, String> greeting(@RequestParam(defaultValue = "world") String name) {
		return Map.of("greeting", "Hello, " + name + "!");
	}

}
