package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreArguments;

/**
 * A {@link RateLimitStore} in Redis: every decision, over however many limits, is one
 * {@code EVALSHA} of {@code rate_limit.lua}, atomic on the server. Time comes from Redis
 * {@code TIME}, so instances with skewed clocks agree, unless a {@link TimeSource} is
 * given.
 * <p>
 * No call waits longer than the configured timeout: a stalled, unreachable or restarting
 * Redis surfaces as a {@link RateLimitStoreException}
 * ({@link RateLimitStoreException#isTimeout() isTimeout()} tells a timeout apart), which
 * the failure-mode layer handles. A timed-out command is cancelled, so it never takes
 * permits after the caller has moved on.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisRateLimitStore implements RateLimitStore {

	/** The default longest wait for Redis. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(100);

	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private static final int FIXED_ARGS = 2;

	private static final int REPLY_PER_LIMIT = 4;

	/** An argument the script reads as absent: unused, or an optional one left unset. */
	private static final String UNSET = "";

	private final LettuceScriptRunner runner;

	private final RedisKeys keys;

	private final long timeoutNanos;

	private final @Nullable TimeSource timeSource;

	private final @Nullable String expirySlackMillis;

	private final ConcurrentMap<LimitSpec, String[]> specArgs = new ConcurrentHashMap<>();

	private RedisRateLimitStore(Builder builder) {
		this.runner = new LettuceScriptRunner(builder.client, RedisRateLimitScript.load());
		this.keys = new RedisKeys(builder.keyPrefix);
		this.timeoutNanos = builder.timeout.toNanos();
		this.timeSource = builder.timeSource;
		this.expirySlackMillis = builder.expirySlack.isZero() ? null : Long.toString(builder.expirySlack.toMillis());
	}

	/**
	 * Starts a builder on the application's Lettuce connection factory (standalone,
	 * Sentinel or Cluster); the store opens a connection of its own from the factory's
	 * client.
	 * @param connectionFactory the started connection factory
	 * @return a new builder
	 */
	public static Builder builder(LettuceConnectionFactory connectionFactory) {
		Objects.requireNonNull(connectionFactory, "'connectionFactory' must not be null");
		AbstractRedisClient client = connectionFactory.getNativeClient();
		if (client == null) {
			throw new IllegalStateException("The LettuceConnectionFactory has not been started");
		}
		return new Builder(client);
	}

	/**
	 * Starts a builder on a Lettuce client ({@code RedisClient} or
	 * {@code RedisClusterClient}).
	 * @param client the client, which the caller keeps and shuts down
	 * @return a new builder
	 */
	public static Builder builder(AbstractRedisClient client) {
		return new Builder(Objects.requireNonNull(client, "'client' must not be null"));
	}

	/**
	 * Connects and loads the script with {@code SCRIPT LOAD}. A Redis that cannot be
	 * reached within {@code wait} is logged and retried on first use; a Redis that
	 * refuses the script (scripting disabled, ACL) fails here, with Redis's reason.
	 * @param wait how long to wait for Redis
	 * @throws IllegalStateException when Redis answers but refuses the script
	 */
	public void start(Duration wait) {
		try {
			this.runner.load(wait).get();
		}
		catch (ExecutionException ex) {
			Throwable cause = LettuceScriptRunner.unwrap(ex.getCause());
			if (cause instanceof RedisCommandExecutionException) {
				throw new IllegalStateException("Redis refused to load " + RedisRateLimitScript.LOCATION
						+ " (SCRIPT LOAD): " + cause.getMessage()
						+ ". The Redis rate limit store needs Lua scripting (SCRIPT LOAD, EVALSHA, TIME) on Redis 6.2 or later",
						cause);
			}
			logger.warn("Redis is not reachable yet (" + describe(cause)
					+ "); rate limit decisions will connect and load the script on first use");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		StoreArguments.check(bucket, key, limits, cost);
		return await(run("d", bucket, key, limits, cost, maxDelayMicros), limits);
	}

	@Override
	public CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		try {
			StoreArguments.check(bucket, key, limits, cost);
		}
		catch (IllegalArgumentException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		CompletableFuture<List<Object>> reply = run("d", bucket, key, limits, cost, maxDelayMicros);
		return reply.orTimeout(this.timeoutNanos, TimeUnit.NANOSECONDS).handle((result, ex) -> {
			if (ex != null) {
				reply.cancel(true);
				throw failure(LettuceScriptRunner.unwrap(ex));
			}
			return toDecision(result, limits);
		});
	}

	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		StoreArguments.check(bucket, key, limits, cost);
		await(run("r", bucket, key, limits, cost, NO_MAX_DELAY), null);
	}

	@Override
	public Decision peek(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		return await(run("p", bucket, key, limits, 1, NO_MAX_DELAY), limits);
	}

	@Override
	public void reset(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		await(run("x", bucket, key, limits, 1, NO_MAX_DELAY), null);
	}

	@Override
	public String name() {
		return "redis";
	}

	@Override
	public void close() {
		this.runner.close();
	}

	private CompletableFuture<List<Object>> run(String op, String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		// The optional arguments follow the limits: unset ones as "", trailing unset ones
		// not at all.
		@Nullable String[] optional = { (maxDelayMicros == NO_MAX_DELAY) ? null : Long.toString(maxDelayMicros),
				(this.timeSource != null) ? Long.toString(this.timeSource.nowMicros()) : null, this.expirySlackMillis };
		int sent = optional.length;
		while (sent > 0 && optional[sent - 1] == null) {
			sent--;
		}
		String[][] limitArgs = new String[limits.size()][];
		int length = FIXED_ARGS + sent;
		for (int i = 0; i < limitArgs.length; i++) {
			limitArgs[i] = this.specArgs.computeIfAbsent(limits.get(i), RedisRateLimitStore::toArgs);
			length += limitArgs[i].length;
		}
		String[] args = new String[length];
		args[0] = op;
		args[1] = Long.toString(cost);
		int at = FIXED_ARGS;
		for (String[] limit : limitArgs) {
			System.arraycopy(limit, 0, args, at, limit.length);
			at += limit.length;
		}
		for (int i = 0; i < sent; i++) {
			String value = optional[i];
			args[at + i] = (value != null) ? value : UNSET;
		}
		return this.runner.run(this.keys.keys(bucket, key, limits), args);
	}

	/**
	 * The script's arguments for one limit: the algorithm's code and the parameters it
	 * reads (see the header of {@code rate_limit.lua}).
	 */
	private static String[] toArgs(LimitSpec spec) {
		String code = spec.algorithm().code();
		switch (spec.algorithm()) {
			case TOKEN_BUCKET:
			case GCRA:
			case LEAKY_BUCKET:
				return new String[] { code, Long.toString(spec.burst()), Long.toString(spec.emissionIntervalNanos()) };
			case SLIDING_WINDOW_COUNTER:
				return new String[] { code, Long.toString(spec.limit()), Integer.toString(spec.segments()),
						Long.toString(spec.segmentMicros()) };
			default:
				return new String[] { code, Long.toString(spec.limit()), Long.toString(spec.windowMicros()) };
		}
	}

	private @Nullable Decision await(CompletableFuture<List<Object>> reply, @Nullable List<LimitSpec> limits) {
		try {
			List<Object> result = reply.get(this.timeoutNanos, TimeUnit.NANOSECONDS);
			return (limits != null) ? toDecision(result, limits) : null;
		}
		catch (TimeoutException ex) {
			reply.cancel(true);
			throw failure(ex);
		}
		catch (ExecutionException ex) {
			throw failure(LettuceScriptRunner.unwrap(ex.getCause()));
		}
		catch (InterruptedException ex) {
			reply.cancel(true);
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while waiting for Redis", ex, false);
		}
	}

	private RateLimitStoreException failure(Throwable cause) {
		if (cause instanceof RateLimitStoreException storeException) {
			return storeException;
		}
		boolean timeout = cause instanceof TimeoutException;
		String message = timeout ? "Redis did not answer within " + TimeUnit.NANOSECONDS.toMillis(this.timeoutNanos)
				+ "ms (ratelimit.redis.timeout)" : "Redis rate limit call failed: " + describe(cause);
		return new RateLimitStoreException(message, cause, timeout);
	}

	private static String describe(Throwable cause) {
		return cause.getClass().getSimpleName() + ((cause.getMessage() != null) ? ": " + cause.getMessage() : "");
	}

	private static Decision toDecision(List<Object> reply, List<LimitSpec> limits) {
		if (reply.size() != REPLY_PER_LIMIT * limits.size()) {
			throw new RateLimitStoreException("Unexpected reply from " + RedisRateLimitScript.LOCATION + ": " + reply,
					new IllegalStateException("reply size " + reply.size()), false);
		}
		if (limits.size() == 1) {
			return decision(reply, 0, limits.get(0));
		}
		List<Decision> decisions = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			decisions.add(decision(reply, REPLY_PER_LIMIT * i, limits.get(i)));
		}
		return Decision.combine(decisions);
	}

	private static Decision decision(List<Object> reply, int offset, LimitSpec spec) {
		boolean allowed = ((Long) reply.get(offset)) == 1L;
		long remaining = (Long) reply.get(offset + 1);
		long resetAfter = (Long) reply.get(offset + 2);
		// The delay when allowed, the retry-after (-1 = never) when rejected.
		long wait = (Long) reply.get(offset + 3);
		if (allowed) {
			return Decision.allowed(spec, remaining, resetAfter, wait);
		}
		return Decision.rejected(spec, remaining, resetAfter, (wait < 0) ? Decision.NEVER : wait);
	}

	/**
	 * Builds a {@link RedisRateLimitStore}.
	 */
	public static final class Builder {

		private final AbstractRedisClient client;

		private String keyPrefix = "rl";

		private Duration timeout = DEFAULT_TIMEOUT;

		private @Nullable TimeSource timeSource;

		private Duration expirySlack = Duration.ZERO;

		private Builder(AbstractRedisClient client) {
			this.client = client;
		}

		/**
		 * Sets the prefix of every key; {@code rl} by default.
		 * @param keyPrefix the prefix, without braces
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = Objects.requireNonNull(keyPrefix, "'keyPrefix' must not be null");
			return this;
		}

		/**
		 * Sets the longest a call waits for Redis; 100ms by default.
		 * @param timeout the timeout, positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			if (timeout == null || timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("timeout must be positive but was " + timeout);
			}
			this.timeout = timeout;
			return this;
		}

		/**
		 * Sets the clock passed to the script instead of Redis {@code TIME}; {@code null}
		 * (the default) uses Redis time, which every instance shares.
		 * @param timeSource the clock, or {@code null} for Redis time
		 * @return this builder
		 */
		public Builder timeSource(@Nullable TimeSource timeSource) {
			this.timeSource = timeSource;
			return this;
		}

		/**
		 * Sets time added to every key's TTL; zero by default, so keys expire exactly
		 * when their state is fresh again. Only tests need it: a manual
		 * {@link TimeSource} that runs ahead of real time would otherwise see Redis
		 * expire keys its clock still needs.
		 * @param expirySlack the extra TTL, zero or positive
		 * @return this builder
		 */
		public Builder expirySlack(Duration expirySlack) {
			if (expirySlack == null || expirySlack.isNegative()) {
				throw new IllegalArgumentException("expirySlack must not be negative but was " + expirySlack);
			}
			this.expirySlack = expirySlack;
			return this;
		}

		/**
		 * Builds the store; call {@link RedisRateLimitStore#start(Duration)} to connect
		 * early.
		 * @return the store
		 */
		public RedisRateLimitStore build() {
			return new RedisRateLimitStore(this);
		}

	}

}
