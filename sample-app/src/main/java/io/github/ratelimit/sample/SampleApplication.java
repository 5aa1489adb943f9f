package io.github.ratelimit.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small service showing every feature of the rate limiting starter: a filter rule, a
 * login limit that only counts failures, plans through a limit expression, waiting for a
 * partner's quota, a fallback and a shadow-mode bucket.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
