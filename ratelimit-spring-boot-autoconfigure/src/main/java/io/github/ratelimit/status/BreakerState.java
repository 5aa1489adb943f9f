package io.github.ratelimit.status;

/**
 * The state of the circuit breaker in front of a store.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum BreakerState {

	/** Every decision goes to the store. */
	CLOSED,

	/** The store has been failing: decisions go to the failure mode without trying it. */
	OPEN,

	/**
	 * A few probe decisions try the store again; the rest still go to the failure mode.
	 */
	HALF_OPEN,

	/** The store has no circuit breaker (it cannot fail, like the in-memory store). */
	NONE

}
