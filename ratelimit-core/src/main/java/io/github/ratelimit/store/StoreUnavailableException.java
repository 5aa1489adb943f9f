package io.github.ratelimit.store;

import org.jspecify.annotations.Nullable;

/**
 * The store failed and {@code ratelimit.failure-mode} is {@code closed}: the request is
 * rejected (HTTP 503) rather than allowed unchecked.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class StoreUnavailableException extends RateLimitStoreException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what failed
	 * @param cause the store's failure, or {@code null} when the circuit breaker is open
	 */
	public StoreUnavailableException(String message, @Nullable Throwable cause) {
		super(message, cause, false);
	}

}
