package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import io.github.ratelimit.RateLimitExceededException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A key that evaluates to {@code null} with the default {@code ratelimit.null-key=error}:
 * an error naming the method and the expression for {@code @RateLimited}, and 400 Bad
 * Request for a filter rule (the client left out what it is limited by).
 */
@Import(NullKeyConfiguration.class)
@TestPropertySource("classpath:null-key-filter-rules.properties")
class NullKeyTests extends ManualClockMockMvcTests {

	@Autowired
	private NullKeyConfiguration.Greeter greeter;

	@Test
	void nullKeyOfAnAnnotatedMethodIsAnErrorNamingMethodAndExpression() {
		assertThatIllegalStateException().isThrownBy(() -> this.greeter.greet(null))
			.withMessageContaining("@RateLimited(key) on NullKeyConfiguration.Greeter.greet(String)")
			.withMessageContaining("'#name' evaluated to null")
			.withMessageContaining("ratelimit.null-key=skip");
	}

	@Test
	void nonNullKeysAreLimited() {
		assertThat(this.greeter.greet("ada")).isEqualTo("Hello, ada");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.greeter.greet("ada"));
		assertThat(this.greeter.greet("grace")).isEqualTo("Hello, grace");
	}

	@Test
	void filterRuleWithAMissingKeyHeaderAnswers400() throws Exception {
		this.mvc.perform(get("/api/search"))
			.andExpect(status().isBadRequest())
			.andExpect(header().string("Content-Type", "application/problem+json"))
			.andExpect(header().doesNotExist("RateLimit"))
			.andExpect(jsonPath("$.status").value(400))
			.andExpect(jsonPath("$.title").value("Bad Request"))
			.andExpect(jsonPath("$.detail").value("The request lacks the value that its rate limit is keyed by."))
			.andExpect(jsonPath("$.instance").value("/api/search"))
			.andExpect(jsonPath("$.results").doesNotExist());
	}

	@Test
	void filterRuleWithTheKeyHeaderLimits() throws Exception {
		for (int i = 1; i <= 2; i++) {
			this.mvc.perform(get("/api/search").header("X-Client-Id", "client-1"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"clients\";q=2;w=60"));
		}
		this.mvc.perform(get("/api/search").header("X-Client-Id", "client-1"))
			.andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$['violated-policies'][0]").value("clients"));
	}

}
