package io.github.ratelimit.readme;

import reactor.core.publisher.Flux;

import org.springframework.stereotype.Service;

import io.github.ratelimit.annotation.RateLimited;

@Service
public class Completions {

	private final Model model;

	public Completions(Model model) {
		this.model = model;
	}

	// 30 calls per 10 s per API key, then 5 minutes shut out; 20,000 tokens a minute,
	// reserved at maxTokens, settled with the tokens the stream really used.
	@RateLimited(bucket = "llm-requests", key = "#apiKey")
	@RateLimited(bucket = "llm-tokens", key = "#apiKey", cost = "#request.maxTokens()", settle = "#result.tokens()")
	public Flux<Chunk> complete(String apiKey, CompletionRequest request) {
		return this.model.stream(request);
	}

}
