package io.github.ratelimit.acquire;

/**
 * Told what became of every request the {@link Acquirer} decides: metrics count them, the
 * endpoint keeps per-bucket counts, the web layer writes limit headers. Called on the
 * deciding thread (for an asynchronous store, possibly its I/O thread): must be quick and
 * must not block. An observer that throws is logged and otherwise ignored.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface RateLimitObserver {

	/**
	 * Called once per request, with its final result: after any wait for a permit, before
	 * any wait for a leaky bucket slot.
	 * @param result the decision and its outcome
	 */
	void onDecision(RateLimitResult result);

	/**
	 * Called once a call that reserved permits has settled what it used
	 * ({@link Acquirer#settle}), after the store took or gave back the difference.
	 * @param reserved the reservation's result; its cost is the estimate
	 * @param actual the permits the call used
	 * @param owed the permits of the excess that the key owes (a limit had fewer left), 0
	 * when it had them all or the call used no more than its estimate
	 */
	default void onSettled(RateLimitResult reserved, long actual, long owed) {
	}

	/**
	 * Called when the store could not decide (the failure mode is {@code closed}, or the
	 * store has no fallback).
	 * @param bucket the bucket
	 * @param failure what the store threw
	 * @param storeNanos how long the failed call took
	 */
	default void onError(Bucket bucket, RuntimeException failure, long storeNanos) {
	}

}
