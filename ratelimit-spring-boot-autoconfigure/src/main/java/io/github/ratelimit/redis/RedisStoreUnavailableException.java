package io.github.ratelimit.redis;

/**
 * The Redis rate limit store cannot use Redis, for a reason waiting will not fix: Redis
 * refuses the script, or the store must have Redis and the failure is permanent (see
 * {@link RedisFailureCause#isPermanent()}). Thrown by
 * {@link RedisRateLimitStore#start()}; its message starts with the cause.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RedisStoreUnavailableException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final transient RedisFailureCause failureCause;

	private final boolean required;

	/**
	 * Creates an exception.
	 * @param message what failed, starting with the cause's description
	 * @param failureCause the classified cause
	 * @param required whether it is thrown only because the store requires Redis (see
	 * {@link RedisRateLimitStore.Builder#required(boolean)}); {@code false} when no
	 * decision could ever run on this Redis
	 */
	public RedisStoreUnavailableException(String message, RedisFailureCause failureCause, boolean required) {
		super(message, failureCause.evidence());
		this.failureCause = failureCause;
		this.required = required;
	}

	/**
	 * Returns whether the store would have started without Redis had it not required it.
	 * @return {@code true} when thrown only because Redis is required
	 */
	public boolean isRequired() {
		return this.required;
	}

	/**
	 * Returns why Redis cannot be used.
	 * @return the classified cause
	 */
	public RedisFailureCause failureCause() {
		return this.failureCause;
	}

}
