package io.github.ratelimit.status;

import org.jspecify.annotations.Nullable;

/**
 * The state of the store as operators see it.
 *
 * @param store the store name ({@code redis}, {@code memory})
 * @param failureMode what happens while it fails
 * @param degraded whether decisions currently bypass it or fail: its circuit breaker is
 * not closed, its last call failed, or part of it is down (a Redis Cluster master whose
 * keys go to the failure mode while the others stay on the store)
 * @param failures how many calls to it failed since startup
 * @param breaker the state of the circuit breaker in front of it
 * @param localRejections how many requests were rejected since startup without asking the
 * store, from a rejection it had just made (see {@code ratelimit.redis.local-rejections})
 * @param instances how many instances share the limits, as this one counts them: each
 * enforces its share of every limit while the store fails
 * @param lastFailure what the store's last failure was, its cause first (e.g.
 * {@code Redis authentication failed (...)}), while it is degraded; {@code null} when it
 * is healthy or has not failed
 * @author ratelimit-spring-boot-starter authors
 */
public record StoreStatus(String store, FailureMode failureMode, boolean degraded, long failures, BreakerState breaker,
		long localRejections, int instances, @Nullable String lastFailure) {

	/**
	 * Creates the status of a store without a failure to name.
	 * @param store the store name
	 * @param failureMode what happens while it fails
	 * @param degraded whether decisions bypass the store
	 * @param failures how many calls to it failed since startup
	 * @param breaker the state of the circuit breaker in front of it
	 * @param localRejections how many requests were rejected without asking the store
	 * @param instances how many instances share the limits, as this one counts them
	 */
	public StoreStatus(String store, FailureMode failureMode, boolean degraded, long failures, BreakerState breaker,
			long localRejections, int instances) {
		this(store, failureMode, degraded, failures, breaker, localRejections, instances, null);
	}

	/**
	 * Creates the status of a store that this instance alone uses or counts as alone.
	 * @param store the store name
	 * @param failureMode what happens while it fails
	 * @param degraded whether decisions bypass the store
	 * @param failures how many calls to it failed since startup
	 * @param breaker the state of the circuit breaker in front of it
	 * @param localRejections how many requests were rejected without asking the store
	 */
	public StoreStatus(String store, FailureMode failureMode, boolean degraded, long failures, BreakerState breaker,
			long localRejections) {
		this(store, failureMode, degraded, failures, breaker, localRejections, 1);
	}

	/**
	 * Creates the status of a store that answers every request itself.
	 * @param store the store name
	 * @param failureMode what happens while it fails
	 * @param degraded whether decisions bypass the store
	 * @param failures how many calls to it failed since startup
	 * @param breaker the state of the circuit breaker in front of it
	 */
	public StoreStatus(String store, FailureMode failureMode, boolean degraded, long failures, BreakerState breaker) {
		this(store, failureMode, degraded, failures, breaker, 0);
	}

	/**
	 * Creates the status of a store without a circuit breaker (the in-memory store).
	 * @param store the store name
	 * @param failureMode the configured failure mode, which never applies
	 * @param degraded whether decisions bypass the store
	 * @param failures how many calls to it failed since startup
	 */
	public StoreStatus(String store, FailureMode failureMode, boolean degraded, long failures) {
		this(store, failureMode, degraded, failures, BreakerState.NONE);
	}

}
