package io.github.ratelimit.store;

import org.jspecify.annotations.Nullable;

/**
 * A store could not make a decision: unreachable, timed out, or answered with an error.
 * The failure-mode layer catches this type to fall back, allow or reject.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitStoreException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final boolean timeout;

	/**
	 * Creates an exception.
	 * @param message what failed, naming the store
	 * @param cause the underlying failure, if any
	 * @param timeout whether the store did not answer in time
	 */
	public RateLimitStoreException(String message, @Nullable Throwable cause, boolean timeout) {
		super(message, cause);
		this.timeout = timeout;
	}

	/**
	 * Returns whether the store did not answer in time (as opposed to answering with an
	 * error or refusing the connection).
	 * @return {@code true} for a timeout
	 */
	public boolean isTimeout() {
		return this.timeout;
	}

}
