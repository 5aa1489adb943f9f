package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import io.github.ratelimit.RateLimitExceededException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code ratelimit.null-key=skip}: calls and requests whose key is {@code null} run
 * unlimited; the others are still limited.
 */
@Import(NullKeyConfiguration.class)
@TestPropertySource(locations = "classpath:null-key-filter-rules.properties", properties = "ratelimit.null-key=skip")
class NullKeySkipTests extends ManualClockMockMvcTests {

	@Autowired
	private NullKeyConfiguration.Greeter greeter;

	@Test
	void annotatedMethodRunsUnlimitedForANullKey() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.greeter.greet(null)).isEqualTo("Hello, null");
		}
		assertThat(this.greeter.greet("ada")).isEqualTo("Hello, ada");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.greeter.greet("ada"));
	}

	@Test
	void filterRuleLetsRequestsWithoutTheKeyHeaderThrough() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/search"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit-Policy"));
		}
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(get("/api/search").header("X-Client-Id", "client-2")).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/search").header("X-Client-Id", "client-2")).andExpect(status().isTooManyRequests());
	}

}
