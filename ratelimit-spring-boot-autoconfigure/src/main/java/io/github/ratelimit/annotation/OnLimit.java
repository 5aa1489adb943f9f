package io.github.ratelimit.annotation;

/**
 * What a {@link RateLimited} method does when its limit is reached.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum OnLimit {

	/**
	 * Throw {@link io.github.ratelimit.RateLimitExceededException} (HTTP 429 in a web
	 * request), or call the {@code fallbackMethod} when one is set.
	 */
	REJECT,

	/**
	 * Wait for a permit, up to {@code maxWait}, then reject. Methods returning
	 * {@code CompletionStage}, {@code Mono} or {@code Flux} wait without blocking a
	 * thread.
	 */
	WAIT

}
