package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;

import io.github.ratelimit.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A {@code @RateLimited} expression that does not parse fails the sample's startup, with
 * a message naming the class, the method and the expression, instead of failing the first
 * call.
 */
class BadSpelStartupTests {

	@Test
	void badKeyExpressionFailsStartup() {
		SpringApplicationBuilder application = new SpringApplicationBuilder(SampleApplication.class,
				BadSpelService.class)
			.web(WebApplicationType.NONE)
			.properties("spring.main.banner-mode=off");
		assertThatExceptionOfType(BeanCreationException.class).isThrownBy(() -> application.run().close())
			.withStackTraceContaining(
					"Invalid SpEL in @RateLimited(key) on BadSpelStartupTests.BadSpelService.login(String)")
			.withStackTraceContaining("'#username.('")
			.withMessageContaining("badSpelStartupTests.BadSpelService");
	}

	/**
	 * Registered as a source of the application only: not a component, so no other test's
	 * context scans it.
	 */
	static class BadSpelService {

		@RateLimited(bucket = "bad-spel", key = "#username.(", limit = 5, window = "1m")
		public boolean login(String username) {
			return true;
		}

	}

}
