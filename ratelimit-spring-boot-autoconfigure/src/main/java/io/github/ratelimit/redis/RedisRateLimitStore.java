package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreArguments;

/**
 * A {@link RateLimitStore} in Redis: every decision, over however many limits, is one
 * {@code EVALSHA} of {@code rate_limit.lua}, atomic on the server. Time comes from Redis
 * {@code TIME}, so instances with skewed clocks agree, unless a {@link TimeSource} is
 * given.
 * <p>
 * {@link #start()} connects, loads the script and warms the decision path up (a few
 * hundred peeks), so that the first requests after startup find a compiled, connected
 * store. A store that was not started connects on first use.
 * <p>
 * Time limits: once sent, a call must be answered within the
 * {@link Builder#timeout(Duration) timeout}, as the connection's I/O thread sees it, so
 * time this process spends too busy to run does not count against Redis; a call that
 * finds the connection being made waits for it up to the
 * {@link Builder#connectTimeout(Duration) connect timeout}; a closed connection fails
 * calls at once. No call waits longer than both timeouts together. A stalled, unreachable
 * or restarting Redis surfaces as a {@link RateLimitStoreException}
 * ({@link RateLimitStoreException#isTimeout() isTimeout()} tells a timeout apart), which
 * the failure-mode layer handles. On a client other than Lettuce (see
 * {@link #builderFor(RedisConnectionFactory)}) the timeout is the socket's read timeout,
 * and a call runs on its caller's thread.
 * <p>
 * A decision that timed out may still run in Redis once it wakes up. When such a late
 * decision allowed, its permits are given back at once: the caller was answered without
 * them (by the failure mode), and a request holds permits only in the store whose
 * decision it got. Leaky bucket slots cannot be given back: a late one stays reserved
 * until it drains.
 * <p>
 * Concurrent decisions on the same bucket, key and limits go to Redis together (unless
 * {@link Builder#coalescing(boolean) turned off}): while one such call is in flight, the
 * decisions that arrive wait for it, then go as one call of the script's batch operation,
 * which decides each in order exactly as a call of its own at that instant would. A lone
 * decision is sent at once. A request queued behind a call to a stalled Redis waits for
 * that call's timeout, then for its own.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisRateLimitStore implements RateLimitStore {

	/** The default longest time Redis may take to answer a call once it is sent. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(100);

	/** The default longest wait for a connection being made. */
	public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);

	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisRateLimitStore.class.getClassLoader());

	private final ScriptRunner runner;

	private final RedisDecisionProtocol protocol;

	private final RedisScriptCalls calls;

	private final LongAdder lateRefunds = new LongAdder();

	private final RedisCoalescerScript batches;

	/** Sends concurrent decisions on one key together; {@code null} when turned off. */
	private final @Nullable DecisionCoalescer coalescer;

	private final RedisStoreLifecycle lifecycle;

	RedisRateLimitStore(RedisStoreBuilder.Settings settings) {
		this.runner = settings.runner()
			.create(RedisRateLimitScript.load(), settings.connectTimeout(), settings.timeout());
		this.protocol = new RedisDecisionProtocol(new RedisKeys(settings.keyPrefix()), settings.timeSource(),
				settings.expirySlack());
		this.calls = new RedisScriptCalls(this.runner, settings.timeout(), settings.connectTimeout());
		this.batches = new RedisCoalescerScript(this.calls, this.protocol,
				(lane, cost) -> giveBack(lane.bucket(), lane.key(), lane.limits(), cost));
		this.coalescer = settings.coalescing() ? new DecisionCoalescer(this.batches, this.calls.maxWaitNanos()) : null;
		this.lifecycle = new RedisStoreLifecycle(this.runner, this.calls, this.protocol, this, settings);
	}

	/**
	 * Starts a builder on the application's connection factory, whichever its client. On
	 * a {@link LettuceConnectionFactory} the store runs the script on a Lettuce
	 * connection of its own (see {@link #builder(LettuceConnectionFactory)}). On any
	 * other, it runs the script through Spring Data Redis, on the caller's thread: on a
	 * {@code JedisConnectionFactory} with a pool of its own whose read timeout is the
	 * store's {@link Builder#timeout(Duration) timeout} and connect timeout its
	 * {@link Builder#connectTimeout(Duration) connect timeout}; on another client with
	 * the client's own timeouts. Asynchronous calls then run on a bounded pool of the
	 * store's threads.
	 * <p>
	 * Not an overload of {@code builder}: beside {@link #builder(AbstractRedisClient)} it
	 * would need Lettuce's classes to compile, which an application on Jedis has not.
	 * @param connectionFactory the connection factory
	 * @return a new builder
	 */
	public static Builder builderFor(RedisConnectionFactory connectionFactory) {
		Objects.requireNonNull(connectionFactory, "'connectionFactory' must not be null");
		if (LETTUCE_PRESENT && connectionFactory instanceof LettuceConnectionFactory lettuce) {
			return builder(lettuce);
		}
		return new Builder(SpringDataRedisScriptRunner.on(connectionFactory));
	}

	/**
	 * Starts a builder on the application's Lettuce connection factory (standalone,
	 * Sentinel or Cluster); the store opens a connection of its own from the factory's
	 * client when it starts, starting the factory if it has not been started. Its calls
	 * never block: each is timed on the connection's I/O thread.
	 * @param connectionFactory the connection factory
	 * @return a new builder
	 */
	public static Builder builder(LettuceConnectionFactory connectionFactory) {
		Objects.requireNonNull(connectionFactory, "'connectionFactory' must not be null");
		return new Builder(LettuceScriptRunner.on(connectionFactory));
	}

	/**
	 * Starts a builder on a runner of the caller's: tests give the store a script runner
	 * whose calls they control.
	 * @param runner makes the runner
	 * @return a new builder
	 */
	static Builder builder(ScriptRunner.Factory runner) {
		return new Builder(runner);
	}

	/**
	 * Starts a builder on a Lettuce client ({@code RedisClient} or
	 * {@code RedisClusterClient}).
	 * @param client the client, which the caller keeps and shuts down
	 * @return a new builder
	 */
	public static Builder builder(AbstractRedisClient client) {
		Objects.requireNonNull(client, "'client' must not be null");
		return new Builder(LettuceScriptRunner.on(() -> client));
	}

	/**
	 * Connects, loads the script with {@code SCRIPT LOAD} and warms the decision path up,
	 * waiting up to the connect timeout for Redis.
	 * @throws IllegalStateException when Redis answers but refuses the script
	 * @see #start(Duration)
	 */
	public void start() {
		this.lifecycle.start();
	}

	/**
	 * Connects, loads the script with {@code SCRIPT LOAD} and warms the decision path up
	 * with peeks on a key of its own, which write nothing. A Redis that cannot be used
	 * within {@code wait} is logged with its cause ({@link RedisFailureCause}) and
	 * connected to on first use, unless the failure is permanent and the store
	 * {@link Builder#required(boolean) requires Redis}; a Redis that refuses the script
	 * (scripting disabled, an ACL without {@code SCRIPT LOAD} or {@code EVALSHA}) fails
	 * here, with Redis's reason. Starting a started store does nothing.
	 * @param wait how long to wait for Redis
	 * @throws RedisStoreUnavailableException when Redis refuses the script, or when the
	 * store requires Redis and it fails for a reason waiting will not fix
	 */
	public void start(Duration wait) {
		this.lifecycle.start(wait);
	}

	/**
	 * Returns whether the store's connection to Redis is known to be open; for a client
	 * whose connections are pooled, whether none is known to have failed.
	 * @return {@code false} once the store knows Redis cannot be reached now
	 */
	public boolean isConnected() {
		return this.runner.isConnected();
	}

	/**
	 * Sets what runs each time the store's connection is made again after it dropped: the
	 * server may be one that restarted, empty. Lettuce tells; Jedis does not (its callers
	 * find out through failed calls).
	 * @param listener runs on the thread that reconnected; must not block
	 */
	public void onReconnect(Runnable listener) {
		this.runner.onReconnect(listener);
	}

	/**
	 * Returns whether {@link #start()} connected, loaded the script and warmed up.
	 * @return {@code true} once started
	 */
	public boolean isStarted() {
		return this.lifecycle.isStarted();
	}

	/**
	 * Returns how many decisions timed out, then ran in Redis and allowed, and had their
	 * permits given back.
	 * @return the count since the store was created
	 */
	public long lateRefunds() {
		return this.lateRefunds.sum();
	}

	/**
	 * Returns whether concurrent decisions on one key go to Redis together (see
	 * {@link Builder#coalescing(boolean)}).
	 * @return {@code true} when coalescing
	 */
	public boolean isCoalescing() {
		return this.coalescer != null;
	}

	/**
	 * Returns how many decisions went to Redis in one script call with others (see
	 * {@link Builder#coalescing(boolean)}).
	 * @return the count since the store was created; 0 when coalescing is off
	 */
	public long coalescedDecisions() {
		return (this.coalescer != null) ? this.coalescer.coalesced() : 0;
	}

	@Override
	public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		StoreArguments.check(bucket, key, limits, cost);
		if (this.coalescer != null) {
			return this.calls.await(this.coalescer.decide(bucket, key, limits, cost, maxDelayMicros, false));
		}
		return RedisDecisionProtocol
			.decision(this.calls.await(sendDecision(bucket, key, limits, cost, maxDelayMicros, false)), limits);
	}

	@Override
	public CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		CompletableFuture<Decision> invalid = StoreArguments.failedIfInvalid(bucket, key, limits, cost);
		if (invalid != null) {
			return invalid;
		}
		if (this.coalescer != null) {
			// Completes within twice the longest wait: the call in flight, then its own.
			return this.coalescer.decide(bucket, key, limits, cost, maxDelayMicros, true);
		}
		return this.calls.whenReplied(sendDecision(bucket, key, limits, cost, maxDelayMicros, true),
				(reply) -> RedisDecisionProtocol.decision(reply, limits));
	}

	/**
	 * Decides the requests in one call of the batch operation, in order, whatever their
	 * number: what the coalescer sends for two or more. Tests compare it with one call
	 * per request.
	 */
	List<Decision> decideBatch(String bucket, String key, List<LimitSpec> limits, long[] costs,
			long[] maxDelaysMicros) {
		return this.batches.decideBatch(bucket, key, limits, costs, maxDelaysMicros);
	}

	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		StoreArguments.check(bucket, key, limits, cost);
		this.calls.call(this.protocol.refund(bucket, key, limits, cost));
	}

	@Override
	public void charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		StoreArguments.check(bucket, key, limits, costs);
		this.calls.call(this.protocol.charge(bucket, key, limits, costs));
	}

	@Override
	public boolean restore(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		StoreArguments.check(bucket, key, limits, costs);
		return RedisDecisionProtocol.restored(this.calls.call(this.protocol.restore(bucket, key, limits, costs)));
	}

	/**
	 * Tells Redis this instance is alive and reads what the instances on this Redis and
	 * key prefix share, in one call of the script's heartbeat operation (see the header
	 * of {@code rate_limit.lua}).
	 * @param timeToLive how long this heartbeat counts this instance as alive
	 * @return what the instances share
	 * @throws RateLimitStoreException when Redis cannot answer
	 */
	public Heartbeat heartbeat(Duration timeToLive) {
		return this.lifecycle.heartbeat(timeToLive);
	}

	/**
	 * Tells Redis this instance leaves, so that the others stop counting it at once
	 * rather than when its last heartbeat expires.
	 * @throws RateLimitStoreException when Redis cannot answer
	 */
	public void leave() {
		this.lifecycle.leave();
	}

	/**
	 * Returns the id under which this store's heartbeats count this instance.
	 * @return the id, random per store
	 */
	public String instanceId() {
		return this.lifecycle.instanceId();
	}

	@Override
	public Decision peek(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		return RedisDecisionProtocol.decision(this.calls.call(this.protocol.peek(bucket, key, limits)), limits);
	}

	/**
	 * Forgets the key's state, and counts the reset in the instances' heartbeat, so that
	 * every instance on this Redis forgets what it remembered of keys (rejections, usage
	 * it would write back after an outage) by its next heartbeat.
	 */
	@Override
	public void reset(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		this.calls.call(this.protocol.reset(bucket, key, limits));
		this.lifecycle.countReset();
	}

	@Override
	public String name() {
		return "redis";
	}

	@Override
	public void close() {
		this.runner.close();
	}

	/** Sends a decision whose permits go back if it allows after its caller moved on. */
	private CompletableFuture<List<Object>> sendDecision(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, boolean async) {
		return this.calls.send(this.protocol.decide(bucket, key, limits, cost, maxDelayMicros), async,
				lateDecision(bucket, key, limits, cost));
	}

	/**
	 * Gives back the permits of a decision that allowed after its caller had been
	 * answered without it.
	 */
	private Consumer<List<Object>> lateDecision(String bucket, String key, List<LimitSpec> limits, long cost) {
		return (reply) -> {
			try {
				if (RedisDecisionProtocol.decision(reply, limits).allowed()) {
					giveBack(bucket, key, limits, cost);
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Could not give back the permits of a late Redis decision", ex);
			}
		};
	}

	private void giveBack(String bucket, String key, List<LimitSpec> limits, long cost) {
		this.lateRefunds.increment();
		logger.debug(
				"A Redis decision of bucket '" + bucket + "' allowed after it had timed out: giving its permits back");
		this.calls.send(this.protocol.refund(bucket, key, limits, cost), false, null);
	}

	/**
	 * Builds a {@link RedisRateLimitStore}: its settings and {@code build()} are
	 * {@link RedisStoreBuilder}'s.
	 */
	public static final class Builder extends RedisStoreBuilder<Builder> {

		private Builder(ScriptRunner.Factory runner) {
			super(runner);
		}

		@Override
		Builder self() {
			return this;
		}

	}

}
