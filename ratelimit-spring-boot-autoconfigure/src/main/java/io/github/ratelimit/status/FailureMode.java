package io.github.ratelimit.status;

/**
 * What happens to requests while the store (Redis) fails: {@code ratelimit.failure-mode}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum FailureMode {

	/**
	 * Each instance enforces the same limits with its own in-memory store until Redis
	 * answers again.
	 */
	FALLBACK,

	/** Allow every request. */
	OPEN,

	/** Reject every request (HTTP 503). */
	CLOSED

}
