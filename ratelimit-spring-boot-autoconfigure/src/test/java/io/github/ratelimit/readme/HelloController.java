package io.github.ratelimit.readme;

import reactor.core.publisher.Mono;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.annotation.RateLimited;

@RestController
class HelloController {

	// 5 per minute per client address; #request is the ServerHttpRequest being served.
	@GetMapping("/hello")
	@RateLimited(bucket = "hello", key = "#request.remoteAddress.hostString", limit = 5, window = "1m")
	Mono<String> hello() {
		return Mono.just("hello");
	}

}
