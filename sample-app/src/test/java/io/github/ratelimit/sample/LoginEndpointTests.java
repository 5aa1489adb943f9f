package io.github.ratelimit.sample;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.ResultActions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code POST /login}, as a form and as JSON: {@code LoginService} allows 5 failed
 * attempts per username per minute ({@code refundWhen = "#result"}: successful logins
 * give their permit back).
 */
class LoginEndpointTests extends ManualClockMockMvcTests {

	@Test
	void correctPasswordLogsInWithForm() throws Exception {
		form("alice", "correct-horse").andExpect(status().isOk())
			.andExpect(jsonPath("$.status").value("logged in"))
			.andExpect(jsonPath("$.username").value("alice"))
			.andExpect(header().string("RateLimit-Policy", "\"login\";q=5;w=60"));
	}

	@Test
	void correctPasswordLogsInWithJson() throws Exception {
		json("alice", "correct-horse").andExpect(status().isOk())
			.andExpect(jsonPath("$.status").value("logged in"))
			.andExpect(jsonPath("$.username").value("alice"));
	}

	@Test
	void fiveFailuresAreAnsweredWith401ThenTheSixthAttemptWith429() throws Exception {
		for (int i = 1; i <= 5; i++) {
			form("mallory", "guess-" + i).andExpect(status().isUnauthorized())
				.andExpect(jsonPath("$.status").value("invalid credentials"))
				.andExpect(header().string("RateLimit-Policy", "\"login\";q=5;w=60"))
				.andExpect(header().string("RateLimit", "\"login\";r=" + (5 - i) + ";t=60"));
		}
		form("mallory", "guess-6").andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "60"))
			.andExpect(header().string("Content-Type", "application/problem+json"))
			.andExpect(header().string("RateLimit-Policy", "\"login\";q=5;w=60"))
			.andExpect(header().string("RateLimit", "\"login\";r=0;t=60"))
			.andExpect(jsonPath("$.type").value(GreetingEndpointTests.QUOTA_EXCEEDED))
			.andExpect(jsonPath("$.title").value(GreetingEndpointTests.QUOTA_EXCEEDED_TITLE))
			.andExpect(jsonPath("$.status").value(429))
			.andExpect(jsonPath("$.detail").value("Rate limit 'login' exceeded; retry after 60 seconds."))
			.andExpect(jsonPath("$.instance").value("/login"))
			.andExpect(jsonPath("$['violated-policies']", contains("login")));
	}

	@Test
	void formAndJsonFailuresCountTogether() throws Exception {
		for (int i = 0; i < 3; i++) {
			form("oscar", "wrong").andExpect(status().isUnauthorized());
		}
		for (int i = 0; i < 2; i++) {
			json("oscar", "wrong").andExpect(status().isUnauthorized());
		}
		json("oscar", "wrong").andExpect(status().isTooManyRequests());
		form("oscar", "wrong").andExpect(status().isTooManyRequests());
	}

	@Test
	void successfulLoginsDoNotCount() throws Exception {
		for (int i = 0; i < 4; i++) {
			form("alice", "wrong").andExpect(status().isUnauthorized());
		}
		for (int i = 0; i < 20; i++) {
			json("alice", "correct-horse").andExpect(status().isOk());
		}
		// Only the fifth failure uses the last permit.
		form("alice", "wrong").andExpect(status().isUnauthorized());
		// Now even the right password waits: the limit is per username.
		form("alice", "correct-horse").andExpect(status().isTooManyRequests());
	}

	@Test
	void otherUsernamesAreNotAffected() throws Exception {
		for (int i = 0; i < 5; i++) {
			form("trudy", "wrong").andExpect(status().isUnauthorized());
		}
		form("trudy", "wrong").andExpect(status().isTooManyRequests());
		form("victor", "wrong").andExpect(status().isUnauthorized())
			.andExpect(header().string("RateLimit", "\"login\";r=4;t=60"));
		json("alice", "correct-horse").andExpect(status().isOk());
	}

	@Test
	void usernameIsAllowedAgainAfterRetryAfter() throws Exception {
		for (int i = 0; i < 5; i++) {
			form("eve", "wrong").andExpect(status().isUnauthorized());
		}
		MvcResult rejected = form("eve", "wrong").andExpect(status().isTooManyRequests()).andReturn();
		long retryAfter = Long.parseLong(rejected.getResponse().getHeader("Retry-After"));
		assertThat(retryAfter).isGreaterThanOrEqualTo(1);
		advance(Duration.ofSeconds(retryAfter - 1));
		form("eve", "wrong").andExpect(status().isTooManyRequests());
		advance(Duration.ofSeconds(1));
		form("eve", "wrong").andExpect(status().isUnauthorized());
	}

	private ResultActions form(String username, String password) throws Exception {
		return this.mvc.perform(post("/login").formField("username", username).formField("password", password));
	}

	private ResultActions json(String username, String password) throws Exception {
		return this.mvc.perform(post("/login").contentType(MediaType.APPLICATION_JSON)
			.content("{\"username\":\"" + username + "\",\"password\":\"" + password + "\"}"));
	}

}
