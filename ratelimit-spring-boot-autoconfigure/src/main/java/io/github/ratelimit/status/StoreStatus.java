package io.github.ratelimit.status;

/**
 * The state of the store as operators see it.
 *
 * @param store the store name ({@code redis}, {@code memory})
 * @param failureMode what happens while it fails
 * @param degraded whether decisions currently bypass it or fail: its circuit breaker is
 * not closed, or its last call failed
 * @param failures how many calls to it failed since startup
 * @param breaker the state of the circuit breaker in front of it
 * @author ratelimit-spring-boot-starter authors
 */
public record StoreStatus(String store, FailureMode failureMode, boolean degraded, long failures,
		BreakerState breaker) {

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
