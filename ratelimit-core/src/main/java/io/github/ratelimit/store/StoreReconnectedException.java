package io.github.ratelimit.store;

import org.jspecify.annotations.Nullable;

/**
 * The store's connection dropped and was made anew while a call waited for it (the call
 * was not sent), or after the call was sent and before its reply came (Redis may have run
 * it; see {@link #mayHaveRun()}): the server may be one that restarted empty, so the call
 * must not decide on it before a check for lost data. A failover layer checks, then calls
 * again, once: a call that may have run is then counted twice at worst, never admitted
 * twice.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class StoreReconnectedException extends RateLimitStoreException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception for a call the store did not run.
	 * @param message what happened to the connection
	 * @param cause the underlying failure, if any
	 */
	public StoreReconnectedException(String message, @Nullable Throwable cause) {
		this(message, cause, false);
	}

	/**
	 * Creates an exception.
	 * @param message what happened to the connection
	 * @param cause the underlying failure, if any
	 * @param mayHaveRun whether the call was sent before the connection dropped
	 */
	public StoreReconnectedException(String message, @Nullable Throwable cause, boolean mayHaveRun) {
		super(message, cause, false, mayHaveRun);
	}

}
