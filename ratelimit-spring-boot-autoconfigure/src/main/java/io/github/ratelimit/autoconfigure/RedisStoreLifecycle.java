package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Starts the Redis rate limit store with the application context: connect, load the
 * script, warm the decision path up ({@link RedisRateLimitStore#start()}). It runs after
 * the Redis connection factories (phase 0) and before the web server and message listener
 * containers, so the application takes no request before the store is ready, or before
 * the connect timeout has passed with Redis unreachable. A Redis that refuses the script,
 * or (with {@code ratelimit.store=redis}) fails for a reason waiting will not fix, fails
 * the start with a {@code RedisStoreUnavailableException}, which
 * {@link RedisStoreUnavailableFailureAnalyzer} reports.
 */
class RedisStoreLifecycle implements SmartLifecycle {

	/**
	 * After Spring Data Redis's connection factories (phase 0), before the web server
	 * ({@code DEFAULT_PHASE - 2048}) and listener containers.
	 */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

	private final ObjectProvider<RateLimitStore> store;

	private volatile boolean running;

	RedisStoreLifecycle(ObjectProvider<RateLimitStore> store) {
		this.store = store;
	}

	@Override
	public void start() {
		RedisRateLimitStore redis = redisStore();
		if (redis != null) {
			redis.start();
		}
		this.running = true;
	}

	/**
	 * Closes the store's own Redis connection while the application's Lettuce client is
	 * still running: the connection factory (phase 0) stops after this phase and shuts
	 * its client down, closing every connection of the client; closing ours after that
	 * would make Lettuce warn {@code Connection is already closed}. Closing the store
	 * again with its bean does nothing. A context stopped and started again runs on the
	 * failure mode.
	 */
	@Override
	public void stop() {
		RedisRateLimitStore redis = redisStore();
		if (redis != null) {
			redis.close();
		}
		this.running = false;
	}

	private @Nullable RedisRateLimitStore redisStore() {
		return redisStoreOf(this.store.getIfUnique());
	}

	/**
	 * Returns the Redis store that decides for {@code store}: the store itself, or the
	 * primary of a failover store.
	 * @param store the application's store, if any
	 * @return the Redis store, or {@code null} when {@code store} is not one
	 */
	static @Nullable RedisRateLimitStore redisStoreOf(@Nullable RateLimitStore store) {
		RateLimitStore decider = (store instanceof FailoverRateLimitStore failover) ? failover.primary() : store;
		return (decider instanceof RedisRateLimitStore redis) ? redis : null;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
