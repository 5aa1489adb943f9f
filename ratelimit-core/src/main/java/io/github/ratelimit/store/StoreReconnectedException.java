package io.github.ratelimit.store;

import org.jspecify.annotations.Nullable;

/**
 * A call was not sent because the store's connection dropped and was made anew while it
 * waited: the server may be one that restarted empty, so the call must not decide on it
 * before a check for lost data. A failover layer checks, then calls again.
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
		super(message, cause, false);
	}

}
