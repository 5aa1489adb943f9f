package io.github.ratelimit.concurrency;

/**
 * Told what became of the permits of concurrency limits: metrics count them, the endpoint
 * keeps per-bucket counts. Called on the thread that acquired, renewed or released; must
 * be quick and must not block. An observer that throws is logged and otherwise ignored.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface ConcurrencyObserver {

	/**
	 * Called once per request for a permit, with its final decision (after any wait).
	 * @param bucket the bucket
	 * @param decision the decision
	 * @param waited whether the request waited for a permit
	 */
	void onAcquire(String bucket, ConcurrencyDecision decision, boolean waited);

	/**
	 * Called once per permit given back.
	 * @param bucket the bucket
	 * @param held {@code false} when the permit was no longer held: its lease had
	 * expired, or an operator released the key
	 */
	default void onRelease(String bucket, boolean held) {
	}

	/**
	 * Called when a renewal found that a permit's lease was gone while its call still
	 * ran.
	 * @param bucket the bucket
	 */
	default void onLeaseLost(String bucket) {
	}

	/**
	 * Called when a request was decided without the store, which could not answer: the
	 * failure mode decided it (counted in this JVM, allowed, or refused).
	 * @param bucket the bucket
	 */
	default void onStoreFailure(String bucket) {
	}

}
