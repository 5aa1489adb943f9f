package io.github.ratelimit.benchmarks.app;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The endpoints the limiters guard: a tiny JSON body, so the limiter's cost is visible.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@RestController
public class HelloController {

	/**
	 * The measured endpoint, with a limit never reached during a run.
	 * @return a greeting
	 */
	@GetMapping("/api/hello")
	public Greeting hello() {
		return new Greeting("hello");
	}

	/**
	 * The sanity endpoint, with a limit of 3 per hour: the fourth request of a key is
	 * rejected, which shows the limiter is really in the path.
	 * @return a greeting
	 */
	@GetMapping("/api/small")
	public Greeting small() {
		return new Greeting("small");
	}

	/**
	 * The response body.
	 *
	 * @param message the message
	 */
	public record Greeting(String message) {

	}

}
