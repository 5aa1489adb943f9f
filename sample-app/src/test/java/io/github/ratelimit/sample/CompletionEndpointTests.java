package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.ResultActions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code POST /v1/completions}: a streamed completion reserves its {@code maxTokens} in
 * {@code llm-tokens} and {@code llm-quota} and settles the tokens it streamed; a client
 * that calls past {@code llm-requests} is shut out for its penalty.
 */
class CompletionEndpointTests extends ManualClockMockMvcTests {

	private static final Pattern TOKENS = Pattern.compile("\"tokens\":(\\d+)");

	@Test
	void aCompletionIsStreamedAndChargedTheTokensItUsedNotItsMaxTokens() throws Exception {
		String body = complete("key-streamed", 200).andExpect(status().isOk())
			.andExpect(header().string("Content-Type", MediaType.APPLICATION_NDJSON_VALUE))
			.andReturn()
			.getResponse()
			.getContentAsString();
		long used = 0;
		Matcher tokens = TOKENS.matcher(body);
		while (tokens.find()) {
			used += Long.parseLong(tokens.group(1));
		}
		assertThat(used).isPositive();
		this.mvc.perform(get("/actuator/ratelimits/llm-quota/key-streamed"))
			.andExpect(jsonPath("$.remaining").value(1_000_000 - used));
		this.mvc.perform(get("/actuator/ratelimits/llm-tokens/key-streamed"))
			.andExpect(jsonPath("$.remaining").value(20_000 - used));
	}

	@Test
	void aClientThatKeepsCallingPastTheRequestLimitIsShutOutForFiveMinutes() throws Exception {
		for (int i = 0; i < 30; i++) {
			complete("key-hammering", 1).andExpect(status().isOk());
		}
		complete("key-hammering", 1).andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "300"));
		advance(Duration.ofSeconds(60));
		complete("key-hammering", 1).andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "240"));
		complete("key-polite", 1).andExpect(status().isOk());
	}

	@Test
	void aMaxTokensBelowOneIsTheClientsMistake() throws Exception {
		this.mvc
			.perform(post("/v1/completions").header("X-Api-Key", "key-careless")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"prompt\":\"hi\",\"maxTokens\":0}"))
			.andExpect(status().isBadRequest());
	}

	/**
	 * A completion, streamed to its end; a rejection too comes through the stream (the
	 * permits are taken when Spring MVC subscribes to it).
	 */
	private ResultActions complete(String apiKey, int maxTokens) throws Exception {
		MvcResult started = this.mvc
			.perform(post("/v1/completions").header("X-Api-Key", apiKey)
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"prompt\":\"count my tokens\",\"maxTokens\":" + maxTokens + "}"))
			.andExpect(request().asyncStarted())
			.andReturn();
		return this.mvc.perform(asyncDispatch(started));
	}

}
