package io.github.ratelimit.sample;

import reactor.core.publisher.Flux;

import org.springframework.stereotype.Service;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.sample.FakeModel.Chunk;
import io.github.ratelimit.sample.FakeModel.CompletionRequest;

/**
 * The "LLM API": per API key, requests per 10 seconds with a penalty for clients that
 * keep calling after a 429 ({@code llm-requests}); tokens per minute ({@code llm-tokens})
 * and a quota of tokens per 30 days ({@code llm-quota}), each reserved at
 * {@code maxTokens} and settled with the tokens the streamed completion really used.
 * Limits are in application.yml.
 */
@Service
class CompletionService {

	private final FakeModel model;

	CompletionService(FakeModel model) {
		this.model = model;
	}

	@RateLimited(bucket = "llm-requests", key = "#apiKey")
	@RateLimited(bucket = "llm-tokens", key = "#apiKey", cost = "#request.maxTokens()", settle = "#result.tokens()")
	@RateLimited(bucket = "llm-quota", key = "#apiKey", cost = "#request.maxTokens()", settle = "#result.tokens()",
			zoneExpression = "@customers.zoneOf(#apiKey)")
	public Flux<Chunk> complete(String apiKey, CompletionRequest request) {
		return this.model.stream(request);
	}

}
