package io.github.ratelimit.readme;

import reactor.core.publisher.Flux;

/**
 * A language model of the README's metered-usage recipe: streams a completion.
 */
public interface Model {

	/**
	 * Streams a completion.
	 * @param request what is asked
	 * @return its chunks, each with the tokens it used
	 */
	Flux<Chunk> stream(CompletionRequest request);

}
