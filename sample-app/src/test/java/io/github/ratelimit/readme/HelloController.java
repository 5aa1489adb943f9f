package io.github.ratelimit.readme;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.annotation.RateLimited;

@RestController
class HelloController {

	// 5 per minute per client address; #request is the current HttpServletRequest.
	@GetMapping("/hello")
	@RateLimited(bucket = "hello", key = "#request.remoteAddr", limit = 5, window = "1m")
	String hello() {
		return "hello";
	}

}
