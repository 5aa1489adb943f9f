package io.github.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code ratelimit.buckets.<name>} overrides what the code sets, field by field: the
 * annotation's limit of {@code login} and the {@code application.yml} limit of the
 * filter's bucket {@code api}, as an operator would with
 * {@code RATELIMIT_BUCKETS_LOGIN_LIMIT=3}.
 */
@TestPropertySource(properties = { "ratelimit.buckets.login.limit=3", "ratelimit.buckets.api.limit=2",
		"ratelimit.buckets.reports.limit=2" })
class PrecedenceTests extends ManualClockMockMvcTests {

	@Test
	void configuredLoginLimitOverridesTheAnnotation() throws Exception {
		for (int i = 1; i <= 3; i++) {
			this.mvc.perform(post("/login").formField("username", "mallory").formField("password", "wrong"))
				.andExpect(status().isUnauthorized())
				.andExpect(header().string("RateLimit-Policy", "\"login\";q=3;w=60"));
		}
		this.mvc.perform(post("/login").formField("username", "mallory").formField("password", "wrong"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "60"))
			.andExpect(jsonPath("$.detail").value("Rate limit 'login' exceeded; retry after 60 seconds."));
	}

	@Test
	void configuredApiLimitAppliesToTheFilterRule() throws Exception {
		for (int i = 1; i <= 2; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.7.1")))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Policy", "\"api\";q=2;w=10"))
				.andExpect(header().string("RateLimit", "\"api\";r=" + (2 - i) + ";t=10"));
		}
		this.mvc.perform(get("/api/greeting").with(from("10.0.7.1"))).andExpect(status().isTooManyRequests());
	}

	@Test
	void aConfiguredLimitOverridesTheLimitExpressionToo() throws Exception {
		for (String plan : new String[] { "demo-free", "demo-premium" }) {
			for (int i = 1; i <= 2; i++) {
				this.mvc.perform(get("/api/reports").header("X-Api-Key", plan))
					.andExpect(status().isOk())
					.andExpect(header().string("RateLimit-Policy", "\"reports\";q=2;w=60"));
			}
			this.mvc.perform(get("/api/reports").header("X-Api-Key", plan)).andExpect(status().isTooManyRequests());
		}
	}

	@Test
	void unsetFieldsKeepTheAnnotationValues() throws Exception {
		this.mvc.perform(get("/actuator/ratelimits"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].source").value("configuration"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].limits[0].algorithm").value("sliding-log"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].limits[0].limit").value(3))
			.andExpect(jsonPath("$.buckets[?(@.name == 'login')].limits[0].window").value("1m"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].limits[0].algorithm").value("sliding-window-counter"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].limits[0].limit").value(2))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].limits[0].window").value("10s"));
	}

}
