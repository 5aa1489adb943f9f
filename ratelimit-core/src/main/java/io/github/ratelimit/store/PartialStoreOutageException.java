package io.github.ratelimit.store;

import org.jspecify.annotations.Nullable;

/**
 * A store could not decide one key because the part of the store that holds it is down (a
 * Redis Cluster master whose slot the key hashes to), while the rest of the store
 * answers: the failure mode decides this key, and keys held elsewhere stay on the store.
 * A failover layer does not let such failures open its circuit breaker for every key.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class PartialStoreOutageException extends RateLimitStoreException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception for a call the store did not run.
	 * @param message what failed, naming the part of the store that is down
	 * @param cause the underlying failure, if any
	 */
	public PartialStoreOutageException(String message, @Nullable Throwable cause) {
		super(message, cause, false);
	}

	/**
	 * Creates an exception.
	 * @param message what failed, naming the part of the store that is down
	 * @param cause the underlying failure, if any
	 * @param mayHaveRun whether the call reached that part before it went down, which may
	 * have run it, and no reply will ever tell (see
	 * {@link RateLimitStoreException#mayHaveRun()})
	 */
	public PartialStoreOutageException(String message, @Nullable Throwable cause, boolean mayHaveRun) {
		super(message, cause, false, mayHaveRun);
	}

}
