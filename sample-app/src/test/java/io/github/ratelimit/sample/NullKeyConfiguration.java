package io.github.ratelimit.sample;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.annotation.RateLimited;

/**
 * A test-only bean keyed by an argument that may be {@code null}. The tests that use it
 * add a second filter rule, on {@code /api/search}, keyed by a header that may be missing
 * (the sample's rule on {@code /api/greeting} is restated, since a list in properties
 * replaces the one in {@code application.yml}).
 */
@TestConfiguration(proxyBeanMethods = false)
class NullKeyConfiguration {

	@Bean
	Greeter greeter() {
		return new Greeter();
	}

	static class Greeter {

		@RateLimited(bucket = "greeter", key = "#name", limit = 1, window = "1m")
		public String greet(@Nullable String name) {
			return "Hello, " + name;
		}

	}

}
