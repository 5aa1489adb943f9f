package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.TimeSource;

/**
 * The settings of a {@link RedisRateLimitStore}, which its
 * {@link RedisRateLimitStore.Builder Builder} sets: get one from
 * {@link RedisRateLimitStore#builderFor RedisRateLimitStore.builderFor(...)} or
 * {@link RedisRateLimitStore#builder(io.lettuce.core.AbstractRedisClient)
 * RedisRateLimitStore.builder(...)}. Each setter returns the builder it was called on.
 * <p>
 * Time limits: once sent, a call must be answered within the {@link #timeout(Duration)
 * timeout}, as the connection's I/O thread sees it, so time the application spends too
 * busy to run does not count against Redis; a call that finds the connection being made
 * waits for it up to the {@link #connectTimeout(Duration) connect timeout}; a closed
 * connection fails calls at once. No call waits longer than both timeouts together. A
 * stalled, unreachable or restarting Redis surfaces as a
 * {@link io.github.ratelimit.store.RateLimitStoreException} (whose {@code isTimeout()}
 * tells a timeout apart). On a {@code JedisConnectionFactory} the store runs the script
 * through Spring Data Redis on the caller's thread, with a pool of its own whose read
 * timeout is the timeout and connect timeout the connect timeout; on another client than
 * Lettuce or Jedis, with the client's own timeouts. Asynchronous calls then run on a
 * bounded pool of the store's threads.
 *
 * @param <B> the builder's type
 * @author ratelimit-spring-boot-starter authors
 */
public abstract sealed class RedisStoreBuilder<B extends RedisStoreBuilder<B>> permits RedisRateLimitStore.Builder {

	private final ScriptRunner.Factory runner;

	private String keyPrefix = "rl";

	private Duration timeout = RedisRateLimitStore.DEFAULT_TIMEOUT;

	private Duration connectTimeout = RedisRateLimitStore.DEFAULT_CONNECT_TIMEOUT;

	private @Nullable TimeSource timeSource;

	private Duration expirySlack = Duration.ZERO;

	private boolean coalescing = true;

	private boolean required;

	private String whileUnavailable = "rate limit decisions use the failure mode until Redis answers";

	RedisStoreBuilder(ScriptRunner.Factory runner) {
		this.runner = runner;
	}

	/** This builder, as its own type: what every setter returns. */
	abstract B self();

	/**
	 * Sets the prefix of every key; {@code rl} by default.
	 * @param keyPrefix the prefix, without braces
	 * @return this builder
	 */
	public B keyPrefix(String keyPrefix) {
		this.keyPrefix = Objects.requireNonNull(keyPrefix, "'keyPrefix' must not be null");
		return self();
	}

	/**
	 * Sets the longest Redis may take to answer a call once it is sent, as the
	 * connection's I/O thread sees it (on Jedis: the socket read timeout); 100ms by
	 * default. Past it the call fails with a timeout.
	 * @param timeout the timeout, positive
	 * @return this builder
	 */
	public B timeout(Duration timeout) {
		this.timeout = positive("timeout", timeout);
		return self();
	}

	/**
	 * Sets the longest {@link RedisRateLimitStore#start()} waits for Redis, and the
	 * longest a call waits for a connection being made; 5s by default.
	 * @param connectTimeout the timeout, positive
	 * @return this builder
	 */
	public B connectTimeout(Duration connectTimeout) {
		this.connectTimeout = positive("connectTimeout", connectTimeout);
		return self();
	}

	private static Duration positive(String name, @Nullable Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(name + " must be positive but was " + value);
		}
		return value;
	}

	/**
	 * Sets the clock passed to the script instead of Redis {@code TIME}; {@code null}
	 * (the default) uses Redis time, which every instance shares. Instances whose clocks
	 * differ by less than a window stay within their limits: no key goes back to an older
	 * window or gives time back for a caller whose clock is behind, and the window
	 * algorithms' keys live one window longer.
	 * @param timeSource the clock, or {@code null} for Redis time
	 * @return this builder
	 */
	public B timeSource(@Nullable TimeSource timeSource) {
		this.timeSource = timeSource;
		return self();
	}

	/**
	 * Sets time added to every key's TTL; zero by default, so keys expire exactly when
	 * their state is fresh again. Only tests need it: a manual {@link TimeSource} that
	 * runs ahead of real time would otherwise see Redis expire keys its clock still
	 * needs.
	 * @param expirySlack the extra TTL, zero or positive
	 * @return this builder
	 */
	public B expirySlack(Duration expirySlack) {
		if (expirySlack == null || expirySlack.isNegative()) {
			throw new IllegalArgumentException("expirySlack must not be negative but was " + expirySlack);
		}
		this.expirySlack = expirySlack;
		return self();
	}

	/**
	 * Sets whether concurrent decisions on the same bucket, key and limits go to Redis
	 * together: while one such call is in flight, the decisions that arrive wait for it
	 * and then go as one script call (up to 128 of them), which decides each in order as
	 * if it had been sent alone. A lone decision is sent at once. Saves Redis calls on
	 * hot keys, never changes a decision; {@code true} by default. A decision queued
	 * behind a call to a stalled Redis waits for that call's timeout, then for its own.
	 * @param coalescing whether to coalesce decisions
	 * @return this builder
	 */
	public B coalescing(boolean coalescing) {
		this.coalescing = coalescing;
		return self();
	}

	/**
	 * Sets whether the application must have Redis: then {@link #build() the store's}
	 * {@code start()} fails with a {@link RedisStoreUnavailableException} when Redis
	 * fails for a reason waiting will not fix (authentication, authorisation, TLS trust,
	 * unknown host), instead of logging it; {@code false} by default.
	 * @param required whether Redis is required
	 * @return this builder
	 */
	public B required(boolean required) {
		this.required = required;
		return self();
	}

	/**
	 * Sets what the warning of a start without Redis says decisions do meanwhile, as the
	 * layer in front of the store handles failures (per instance limits, say).
	 * @param whileUnavailable the text, a clause without a final full stop
	 * @return this builder
	 */
	public B whileUnavailable(String whileUnavailable) {
		this.whileUnavailable = Objects.requireNonNull(whileUnavailable, "'whileUnavailable' must not be null");
		return self();
	}

	/**
	 * Builds the store; nothing connects before {@link RedisRateLimitStore#start()} or
	 * the first call.
	 * @return the store
	 */
	public RedisRateLimitStore build() {
		return new RedisRateLimitStore(settings());
	}

	/** The settings as they are now, for the store being built. */
	Settings settings() {
		return new Settings(this.runner, this.keyPrefix, this.timeout, this.connectTimeout, this.timeSource,
				this.expirySlack, this.coalescing, this.required, this.whileUnavailable);
	}

	/**
	 * What a store is built with: see the setters.
	 *
	 * @param runner makes the store's script runner
	 * @param keyPrefix the prefix of every key
	 * @param timeout the longest Redis may take to answer a sent call
	 * @param connectTimeout the longest wait for a connection being made
	 * @param timeSource the clock, or {@code null} for Redis time
	 * @param expirySlack the time added to every key's TTL
	 * @param coalescing whether concurrent decisions on one key go together
	 * @param required whether a start fails on a permanent failure
	 * @param whileUnavailable what a start without Redis says decisions do meanwhile
	 */
	record Settings(ScriptRunner.Factory runner, String keyPrefix, Duration timeout, Duration connectTimeout,
			@Nullable TimeSource timeSource, Duration expirySlack, boolean coalescing, boolean required,
			String whileUnavailable) {

	}

}
