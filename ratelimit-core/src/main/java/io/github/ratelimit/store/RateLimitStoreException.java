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

	private final boolean mayHaveRun;

	/**
	 * Creates an exception for a call the store did not run.
	 * @param message what failed, naming the store
	 * @param cause the underlying failure, if any
	 * @param timeout whether the store did not answer in time
	 */
	public RateLimitStoreException(String message, @Nullable Throwable cause, boolean timeout) {
		this(message, cause, timeout, false);
	}

	/**
	 * Creates an exception.
	 * @param message what failed, naming the store
	 * @param cause the underlying failure, if any
	 * @param timeout whether the store did not answer in time
	 * @param mayHaveRun whether the call reached the store, which may have run it, and no
	 * reply will ever tell (the connection was lost after the call was sent)
	 */
	public RateLimitStoreException(String message, @Nullable Throwable cause, boolean timeout, boolean mayHaveRun) {
		super(message, cause);
		this.timeout = timeout;
		this.mayHaveRun = mayHaveRun;
	}

	/**
	 * Returns whether the call reached the store, which may have run it, and no reply
	 * will ever tell: a decision that may have taken permits there although its caller
	 * never learns of it. A call that timed out is not one: its late reply still tells.
	 * @return {@code true} when the outcome stays unknown
	 */
	public boolean mayHaveRun() {
		return this.mayHaveRun;
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
