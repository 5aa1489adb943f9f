package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * A pretend language model: streams a completion of a random length, one chunk per word,
 * each chunk saying how many tokens it used. The prompt's tokens (a word each) come with
 * the first chunk, as a real API counts them in its usage, so a completion can use more
 * than the {@code maxTokens} it was allowed to generate.
 */
@Component
class FakeModel {

	private static final String[] WORDS = { "rate", "limits", "keep", "the", "fleet", "fair", "and", "fast" };

	private final Duration perChunk;

	private final int minWords;

	FakeModel(@Value("${sample.llm.chunk-delay:20ms}") Duration perChunk,
			@Value("${sample.llm.min-words:1}") int minWords) {
		this.perChunk = perChunk;
		this.minWords = minWords;
	}

	Flux<Chunk> stream(CompletionRequest request) {
		int promptTokens = request.prompt().isBlank() ? 0 : request.prompt().trim().split("\\s+").length;
		int words = Math.max(this.minWords, 1 + ThreadLocalRandom.current().nextInt(Math.max(1, request.maxTokens())));
		return Flux.range(0, words).delayElements(this.perChunk).map((i) -> {
			String word = WORDS[i % WORDS.length];
			int tokens = 1 + ((i % 3 == 0) ? 1 : 0) + ((i == 0) ? promptTokens : 0);
			return new Chunk(word, tokens);
		});
	}

	/**
	 * What a client asks for.
	 *
	 * @param prompt the prompt
	 * @param maxTokens the most tokens the completion may generate, at least 1
	 */
	record CompletionRequest(String prompt, int maxTokens) {
	}

	/**
	 * One streamed piece of a completion.
	 *
	 * @param text the text
	 * @param tokens the tokens this chunk used
	 */
	record Chunk(String text, int tokens) {
	}

}
