package io.github.ratelimit.spring;

/**
 * What happens to requests while the store (Redis) fails.
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
