package io.github.ratelimit.sample;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.ResultActions;

import static org.hamcrest.Matchers.startsWith;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Live limit changes with the in-memory store ({@code POST} and {@code DELETE
 * /actuator/ratelimits/{bucket}}, opened with
 * {@code ratelimit.endpoint.limits-write-enabled}): they apply to this instance from the
 * next request on, through the filter and {@code @RateLimited} alike, are checked like
 * configuration, and survive a key's reset.
 */
@TestPropertySource(properties = { "management.endpoint.ratelimits.access=unrestricted",
		"ratelimit.endpoint.limits-write-enabled=true" })
class LiveLimitsMemoryTests extends ManualClockMockMvcTests {

	@AfterEach
	void clearOverrides() throws Exception {
		for (String bucket : new String[] { "api", "login", "reports" }) {
			this.mvc.perform(delete("/actuator/ratelimits/" + bucket)).andExpect(status().isOk());
		}
	}

	@Test
	void aChangedLimitAppliesToTheFilterFromTheNextRequest() throws Exception {
		setLimits("api", "{\"limit\": 3}").andExpect(status().isOk())
			.andExpect(jsonPath("$.appliesTo").value("this instance only"))
			.andExpect(jsonPath("$.bucket").value("api"))
			.andExpect(jsonPath("$.source").value("override"))
			.andExpect(jsonPath("$.limits[0].limit").value(3))
			// What the override does not set stays as configured.
			.andExpect(jsonPath("$.limits[0].window").value("10s"))
			.andExpect(jsonPath("$.limits[0].algorithm").value("sliding-window-counter"))
			.andExpect(jsonPath("$.override.settings.limit").value("3"))
			.andExpect(jsonPath("$.override.changedBy").value("anonymous"))
			.andExpect(jsonPath("$.override.changedAt").isNotEmpty());
		for (int i = 0; i < 3; i++) {
			this.mvc.perform(get("/api/greeting").with(from("10.0.7.1"))).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/greeting").with(from("10.0.7.1")))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=3;w=10"));
		this.mvc.perform(get("/actuator/ratelimits"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].source").value("override"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].limits[0].limit").value(3))
			.andExpect(jsonPath("$.overrides.api.changedBy").value("anonymous"))
			.andExpect(jsonPath("$.overrides.api.settings.limit").value("3"));
	}

	@Test
	void clearingTheChangeBringsTheConfiguredLimitsBack() throws Exception {
		setLimits("api", "{\"limit\": 1, \"window\": \"1m\"}").andExpect(status().isOk());
		this.mvc.perform(get("/api/greeting").with(from("10.0.7.2"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/greeting").with(from("10.0.7.2"))).andExpect(status().isTooManyRequests());
		this.mvc.perform(delete("/actuator/ratelimits/api"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.source").value("configuration"))
			.andExpect(jsonPath("$.limits[0].limit").value(10))
			.andExpect(jsonPath("$.limits[0].window").value("10s"))
			.andExpect(jsonPath("$.override").doesNotExist());
		this.mvc.perform(get("/api/greeting").with(from("10.0.7.3")))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"api\";q=10;w=10"));
	}

	@Test
	void aChangedLimitAppliesToAnAnnotatedMethodAndSurvivesAResetOfAKey() throws Exception {
		setLimits("login", "{\"limit\": 2}").andExpect(status().isOk())
			.andExpect(jsonPath("$.limits[0].algorithm").value("sliding-log"))
			.andExpect(jsonPath("$.limits[0].limit").value(2));
		login("trudy").andExpect(status().isUnauthorized());
		login("trudy").andExpect(status().isUnauthorized());
		login("trudy").andExpect(status().isTooManyRequests());
		// A key's reset forgets its state, not the bucket's changed limits.
		this.mvc.perform(delete("/actuator/ratelimits/login/trudy")).andExpect(status().isNoContent());
		this.mvc.perform(get("/actuator/ratelimits/login/trudy"))
			.andExpect(jsonPath("$.remaining").value(2))
			.andExpect(jsonPath("$.limits[0].limit.limit").value(2));
		login("trudy").andExpect(status().isUnauthorized());
		login("trudy").andExpect(status().isUnauthorized());
		login("trudy").andExpect(status().isTooManyRequests());
	}

	@Test
	void aChangedLimitWinsOverALimitExpression() throws Exception {
		setLimits("reports", "{\"limit\": 2}").andExpect(status().isOk());
		for (String key : new String[] { "demo-free", "demo-premium" }) {
			reports(key).andExpect(status().isOk());
			reports(key).andExpect(status().isOk());
			reports(key).andExpect(status().isTooManyRequests())
				.andExpect(header().string("RateLimit-Policy", "\"reports\";q=2;w=60"));
		}
	}

	@Test
	void aChangedWindowKeepsTheLimitOfTheExpression() throws Exception {
		setLimits("reports", "{\"window\": \"1h\"}").andExpect(status().isOk());
		for (int i = 0; i < 5; i++) {
			reports("demo-free").andExpect(status().isOk());
		}
		reports("demo-free").andExpect(status().isTooManyRequests())
			.andExpect(header().string("RateLimit-Policy", "\"reports\";q=5;w=3600"));
	}

	@Test
	void invalidSettingsAre400WithThePropertyAtFaultAndChangeNothing() throws Exception {
		setLimits("api", "{\"window\": \"0s\"}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message").value("ratelimit.buckets.api.window: must be positive but was 0ms"));
		setLimits("api", "{\"window\": \"soon\"}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message")
				.value("ratelimit.buckets.api.window: must be a duration, e.g. 500ms, 10s, 1m or PT1M but was 'soon'"));
		setLimits("api", "{\"limit\": -1}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message").value("ratelimit.buckets.api.limit: must be positive but was -1"));
		setLimits("api", "{\"algorithm\": \"sliding\"}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message", startsWith("ratelimit.buckets.api.algorithm: must be one of")));
		setLimits("api", "{\"index\": 1, \"limit\": 5}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message")
				.value("ratelimit.buckets.api.limits[1]: the bucket has one limit; leave 'index' out"));
		// Only limits can be changed: anything else is refused by name.
		setLimits("api", "{\"mode\": \"shadow\"}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message").value("ratelimit.buckets.api.mode: not a limit setting; use limit, window,"
					+ " burst, segments, penalty, calendar, zone, algorithm or index"));
		setLimits("api", "{\"limit\": 3, \"widnow\": \"1m\"}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message").value("ratelimit.buckets.api.widnow: not a limit setting; use limit,"
					+ " window, burst, segments, penalty, calendar, zone, algorithm or index"));
		setLimits("api", "{}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message").value(
					"ratelimit.buckets.api: set at least one of limit, window, burst, segments, penalty, calendar, zone"
							+ " or algorithm"));
		setLimits("api", "{\"index\": \"first\", \"limit\": 5}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.message", startsWith("ratelimit.buckets.api.limits: 'index' must be")));
		this.mvc.perform(get("/actuator/ratelimits"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].source").value("configuration"))
			.andExpect(jsonPath("$.buckets[?(@.name == 'api')].limits[0].limit").value(10))
			.andExpect(jsonPath("$.overrides").isEmpty());
	}

	@Test
	void anUnknownBucketIs404() throws Exception {
		setLimits("no-such-bucket", "{\"limit\": 3}").andExpect(status().isNotFound())
			.andExpect(jsonPath("$.message", startsWith("No bucket 'no-such-bucket'")));
		this.mvc.perform(delete("/actuator/ratelimits/no-such-bucket")).andExpect(status().isNotFound());
	}

	private ResultActions setLimits(String bucket, String json) throws Exception {
		return this.mvc
			.perform(post("/actuator/ratelimits/" + bucket).contentType(MediaType.APPLICATION_JSON).content(json));
	}

	private ResultActions login(String username) throws Exception {
		return this.mvc.perform(post("/login").formField("username", username).formField("password", "wrong"));
	}

	private ResultActions reports(String apiKey) throws Exception {
		return this.mvc.perform(get("/api/reports").header("X-Api-Key", apiKey));
	}

}
