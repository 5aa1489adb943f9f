package io.github.ratelimit.readme;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.annotation.RateLimited;

@RestController
class HelloController {

	// 5 per minute per client address: a token bucket by default (5 at once,
	// then one every 12 s).
	@GetMapping("/hello")
	@RateLimited(bucket = "hello", key = "#clientIp", limit = 5, window = "1m")
	String hello() {
		return "hello";
	}

}
