package io.github.ratelimit.concurrency;

/**
 * What a {@link ConcurrencyLimiter} does while its store cannot answer a request for a
 * permit.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum OnStoreFailure {

	/**
	 * Counts permits in this JVM alone, with the limit's permits, until the store answers
	 * again: at most the permits per key and instance.
	 */
	LOCAL,

	/** Lets the call run without a permit. */
	ALLOW,

	/**
	 * Rejects the call with a {@link io.github.ratelimit.store.StoreUnavailableException}
	 * (503 on the web).
	 */
	REJECT

}
