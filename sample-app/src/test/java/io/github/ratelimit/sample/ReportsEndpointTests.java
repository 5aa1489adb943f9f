package io.github.ratelimit.sample;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.ResultActions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code GET /api/reports}: limited per {@code X-Api-Key} by the key's plan
 * ({@code limitExpression = "@plans.limitFor(#apiKey)"}, GCRA per minute); calls without
 * a key are skipped ({@code skipWhen}) and answered with 401.
 */
class ReportsEndpointTests extends ManualClockMockMvcTests {

	@Test
	void freePlanAllowsFivePerMinute() throws Exception {
		for (int i = 1; i <= 5; i++) {
			reports("demo-free").andExpect(status().isOk())
				.andExpect(jsonPath("$.plan").value("5 per minute"))
				.andExpect(jsonPath("$.reports", contains("daily-sales", "weekly-signups")))
				.andExpect(header().string("RateLimit-Policy", "\"reports\";q=5;w=60"))
				.andExpect(header().string("RateLimit", "\"reports\";r=" + (5 - i) + ";t=" + (12 * i)));
		}
		reports("demo-free").andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "12"))
			.andExpect(header().string("Content-Type", "application/problem+json"))
			.andExpect(header().string("RateLimit-Policy", "\"reports\";q=5;w=60"))
			.andExpect(jsonPath("$.status").value(429))
			.andExpect(jsonPath("$.instance").value("/api/reports"))
			.andExpect(jsonPath("$['violated-policies']", contains("reports")));
	}

	@Test
	void premiumPlanAllowsFiftyPerMinute() throws Exception {
		for (int i = 1; i <= 50; i++) {
			reports("demo-premium").andExpect(status().isOk())
				.andExpect(jsonPath("$.plan").value("50 per minute"))
				.andExpect(header().string("RateLimit-Policy", "\"reports\";q=50;w=60"));
		}
		reports("demo-premium").andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "2"))
			.andExpect(jsonPath("$['violated-policies']", contains("reports")));
	}

	@Test
	void plansAreLimitedIndependently() throws Exception {
		for (int i = 0; i < 5; i++) {
			reports("demo-free").andExpect(status().isOk());
		}
		reports("demo-free").andExpect(status().isTooManyRequests());
		reports("demo-premium").andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"reports\";r=49;t=2"));
	}

	@Test
	void freePlanRecoversOnePermitPerTwelveSeconds() throws Exception {
		for (int i = 0; i < 5; i++) {
			reports("demo-free").andExpect(status().isOk());
		}
		MvcResult rejected = reports("demo-free").andExpect(status().isTooManyRequests()).andReturn();
		long retryAfter = Long.parseLong(rejected.getResponse().getHeader("Retry-After"));
		assertThat(retryAfter).isGreaterThanOrEqualTo(1);
		advance(Duration.ofSeconds(retryAfter - 1));
		reports("demo-free").andExpect(status().isTooManyRequests());
		advance(Duration.ofSeconds(1));
		reports("demo-free").andExpect(status().isOk());
		reports("demo-free").andExpect(status().isTooManyRequests());
	}

	@Test
	void missingKeyIsAnswered401AndNeverLimited() throws Exception {
		for (int i = 0; i < 60; i++) {
			this.mvc.perform(get("/api/reports"))
				.andExpect(status().isUnauthorized())
				.andExpect(jsonPath("$.error").value("unknown or missing X-Api-Key"))
				.andExpect(header().doesNotExist("RateLimit"))
				.andExpect(header().doesNotExist("RateLimit-Policy"));
		}
	}

	@Test
	void unknownKeyIsLimitedLikeTheFreePlan() throws Exception {
		for (int i = 0; i < 5; i++) {
			reports("not-a-customer").andExpect(status().isUnauthorized())
				.andExpect(header().string("RateLimit-Policy", "\"reports\";q=5;w=60"));
		}
		reports("not-a-customer").andExpect(status().isTooManyRequests());
	}

	private ResultActions reports(String apiKey) throws Exception {
		return this.mvc.perform(get("/api/reports").header("X-Api-Key", apiKey));
	}

}
