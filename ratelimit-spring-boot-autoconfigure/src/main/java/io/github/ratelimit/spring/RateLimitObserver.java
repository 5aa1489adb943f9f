package io.github.ratelimit.spring;

/**
 * Told of every decision the {@link RateLimitService} makes: metrics count them, the web
 * layer writes limit headers. Called on the deciding thread; must be quick and must not
 * throw.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface RateLimitObserver {

	/**
	 * Called after each decision.
	 * @param result the decision and its outcome
	 */
	void onDecision(RateLimitResult result);

	/**
	 * Called when the store could not decide (the failure mode is {@code closed}, or the
	 * store has no fallback).
	 * @param bucket the bucket
	 * @param failure what the store threw
	 * @param storeNanos how long the failed call took
	 */
	default void onError(BucketDefinition bucket, RuntimeException failure, long storeNanos) {
	}

}
