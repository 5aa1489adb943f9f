package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.lettuce.core.AbstractRedisClient;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.HeldDecision;
import io.github.ratelimit.concurrency.Holders;
import io.github.ratelimit.concurrency.RateAndConcurrencyStore;
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
 * {@link #start()} connects, loads the script and warms the decision path up, so that the
 * first requests find a compiled, connected store; one not started connects on first use.
 * <p>
 * A stalled, unreachable or restarting Redis surfaces as a
 * {@link RateLimitStoreException} within the time limits {@link RedisStoreBuilder}
 * describes, which the failure-mode layer handles.
 * <p>
 * A decision that timed out may still run once Redis wakes up; if it allowed, its permits
 * are given back (the caller was answered by the failure mode without them).
 * <p>
 * Concurrent decisions on one key go to Redis together unless
 * {@link Builder#coalescing(boolean) turned off}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisRateLimitStore implements RateLimitStore, ConcurrencyStore, RateAndConcurrencyStore {

	/** The default longest time Redis may take to answer a call once it is sent. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(100);

	/** The default longest wait for a connection being made. */
	public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisRateLimitStore.class.getClassLoader());

	private final ScriptRunner runner;

	private final RedisDecisionProtocol protocol;

	private final RedisScriptCalls calls;

	private final LateDecisions late;

	private final RedisCoalescerScript batches;

	/** Sends concurrent decisions on one key together; {@code null} when turned off. */
	private final @Nullable DecisionCoalescer coalescer;

	/**
	 * The second connection of concurrency operations on one Redis; {@code null} when
	 * coalescing is off.
	 */
	private final @Nullable ScriptRunner concurrencyRunner;

	/**
	 * Sends concurrent operations on concurrency limits together; {@code null} when
	 * turned off.
	 */
	private final @Nullable ConcurrencyCoalescer concurrencyCoalescer;

	private final RedisStoreLifecycle lifecycle;

	RedisRateLimitStore(RedisStoreBuilder.Settings settings) {
		RedisRateLimitScript script = RedisRateLimitScript.load();
		this.runner = settings.runner().create(script, settings.connectTimeout(), settings.timeout());
		this.protocol = new RedisDecisionProtocol(new RedisKeys(settings.keyPrefix()), settings.timeSource(),
				settings.expirySlack());
		this.calls = new RedisScriptCalls(this.runner, settings.timeout(), settings.connectTimeout());
		this.late = new LateDecisions(this.calls, this.protocol);
		this.batches = new RedisCoalescerScript(this.calls, this.protocol,
				(lane, cost) -> this.late.giveBack(lane.bucket(), lane.key(), lane.limits(), cost));
		this.coalescer = settings.coalescing() ? new DecisionCoalescer(this.batches) : null;
		// On one Redis the concurrency operations go over a second connection too: with
		// one, a single event loop woke every blocked caller, and under 64 callers that,
		// not Redis, was the limit (1.2 to 1.3 times a tuned Redisson; 1.8 with two).
		this.concurrencyRunner = settings.coalescing()
				? settings.runner().create(script, settings.connectTimeout(), settings.timeout()) : null;
		this.concurrencyCoalescer = (this.concurrencyRunner != null) ? new ConcurrencyCoalescer(
				List.of(this.calls,
						new RedisScriptCalls(this.concurrencyRunner, settings.timeout(), settings.connectTimeout())),
				this.protocol, this.runner::oneNode) : null;
		this.lifecycle = new RedisStoreLifecycle(this.runner, this.calls, this.protocol, this, settings);
	}

	/**
	 * Starts a builder on the application's connection factory, whichever its client: a
	 * {@link LettuceConnectionFactory} as {@link #builder(LettuceConnectionFactory)}
	 * does; any other through Spring Data Redis (see {@link RedisStoreBuilder} for the
	 * timeouts of each). Not an overload of {@code builder}, which would need Lettuce's
	 * classes to compile, which an application on Jedis has not.
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
	 * Starts the store as {@link #start(Duration)} does, waiting up to the connect
	 * timeout for Redis.
	 */
	public void start() {
		startConcurrencyConnection();
		this.lifecycle.start();
	}

	/**
	 * Connects, loads the script and warms the decision path up with peeks on a key of
	 * its own. A Redis that cannot be used within {@code wait} is logged with its cause
	 * ({@link RedisFailureCause}) and connected to on first use, unless the failure is
	 * permanent and the store {@link Builder#required(boolean) requires Redis}. Starting
	 * a started store does nothing.
	 * @param wait how long to wait for Redis
	 * @throws RedisStoreUnavailableException when Redis refuses the script, or when the
	 * store requires Redis and it fails for a reason waiting will not fix
	 */
	public void start(Duration wait) {
		startConcurrencyConnection();
		this.lifecycle.start(wait);
	}

	/**
	 * Makes the concurrency operations' second connection beside the first, without
	 * waiting: a failure there is the first connection's to report, and calls wait for a
	 * connection being made.
	 */
	private void startConcurrencyConnection() {
		if (this.concurrencyRunner != null) {
			this.concurrencyRunner.start().exceptionally((ex) -> null);
		}
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
	 * Returns how many decisions allowed after timing out, and had their permits given
	 * back, since the store was created.
	 * @return the count
	 */
	public long lateRefunds() {
		return this.late.givenBack();
	}

	/**
	 * Returns whether concurrent decisions on one key go to Redis together.
	 * @return {@code true} when coalescing
	 */
	public boolean isCoalescing() {
		return this.coalescer != null;
	}

	/**
	 * Returns how many decisions went to Redis in one script call with others.
	 * @return the count since the store was created; 0 when coalescing is off
	 */
	public long coalescedDecisions() {
		return (this.coalescer != null) ? this.coalescer.coalesced() : 0;
	}

	/**
	 * Returns how many script calls carried coalesced decisions: with
	 * {@link #coalescedDecisions()}, how well decisions are batched.
	 * @return the count since the store was created; 0 when coalescing is off
	 */
	public long coalescedCalls() {
		return (this.coalescer != null) ? this.coalescer.calls() : 0;
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

	/** Decides the requests in one batch call, in order, as the coalescer does. */
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
	public long owe(String bucket, String key, List<LimitSpec> limits, long permits) {
		StoreArguments.check(bucket, key, limits, permits);
		return RedisDecisionProtocol.owed(this.calls.call(this.protocol.owe(bucket, key, limits, permits)), permits);
	}

	@Override
	public ConcurrencyDecision acquire(String bucket, String key, ConcurrencyLimit limit, String holder) {
		List<Object> reply = concurrency("a", bucket, key, holder, limit);
		return new ConcurrencyDecision(((Long) reply.get(0)) == 1L, ((Long) reply.get(1)).intValue(), limit.permits(),
				((Long) reply.get(2)).intValue(), (Long) reply.get(3));
	}

	/**
	 * Decides and takes the permit in one script call (operation {@code q}): its keys
	 * share the hash tag of the bucket and key, so one call may touch both on a Cluster
	 * too. Not coalesced with other calls.
	 */
	@Override
	public @Nullable HeldDecision decideHolding(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, ConcurrencyStore permits, ConcurrencyLimit limit, String holder, boolean enforced) {
		if (permits != this) {
			return null;
		}
		StoreArguments.check(bucket, key, limits, cost);
		Objects.requireNonNull(holder, "'holder' must not be null");
		return RedisDecisionProtocol.heldDecision(this.calls.call(this.protocol.decideHolding(bucket, key, limits, cost,
				maxDelayMicros, holder, limit.permits(), limit.leaseMicros(), enforced)), limits, limit.permits());
	}

	@Override
	public boolean renew(String bucket, String key, ConcurrencyLimit limit, String holder) {
		return ((Long) concurrency("n", bucket, key, holder, limit).get(0)) == 1L;
	}

	@Override
	public boolean release(String bucket, String key, String holder) {
		return ((Long) concurrency("r", bucket, key, holder, null).get(0)) == 1L;
	}

	@Override
	public Holders holders(String bucket, String key) {
		List<Object> reply = concurrency("h", bucket, key, "", null);
		return new Holders(((Long) reply.get(0)).intValue(), (Long) reply.get(1));
	}

	@Override
	public int releaseAll(String bucket, String key) {
		return ((Long) concurrency("x", bucket, key, "", null).get(0)).intValue();
	}

	/**
	 * Returns how many operations on concurrency limits went to Redis in one script call
	 * with others.
	 * @return the count since the store was created; 0 when coalescing is off
	 */
	public long coalescedConcurrencyOperations() {
		return (this.concurrencyCoalescer != null) ? this.concurrencyCoalescer.coalesced() : 0;
	}

	/**
	 * Returns how many script calls carried operations on concurrency limits through the
	 * coalescer: with {@link #coalescedConcurrencyOperations()}, how well they are
	 * batched.
	 * @return the count since the store was created; 0 when coalescing is off
	 */
	public long concurrencyCalls() {
		return (this.concurrencyCoalescer != null) ? this.concurrencyCoalescer.calls() : 0;
	}

	/**
	 * Runs operations of {@code concurrency.lua} in one batch call, in order, as the
	 * coalescer does.
	 */
	List<Object> concurrencyBatch(List<ConcurrencyCoalescer.Operation> operations) {
		return this.calls.call(this.protocol.concurrencyBatch(operations));
	}

	/** One operation of {@code concurrency.lua}: a call of its own, or in a batch. */
	private List<Object> concurrency(String op, String bucket, String key, String holder,
			@Nullable ConcurrencyLimit limit) {
		StoreArguments.check(bucket, key);
		Objects.requireNonNull(holder);
		int permits = (limit != null) ? limit.permits() : 0;
		long leaseMicros = (limit != null) ? limit.leaseMicros() : 0;
		if (this.concurrencyCoalescer != null) {
			return this.concurrencyCoalescer.run(op, bucket, key, holder, permits, leaseMicros);
		}
		return this.calls.call(this.protocol.concurrency(op, bucket, key, holder, permits, leaseMicros));
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
	 * key prefix share, in one call.
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
		if (this.concurrencyRunner != null) {
			this.concurrencyRunner.close();
		}
	}

	/** Sends a decision whose permits go back if it allows after its caller moved on. */
	private CompletableFuture<List<Object>> sendDecision(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, boolean async) {
		return this.calls.send(this.protocol.decide(bucket, key, limits, cost, maxDelayMicros), async,
				this.late.onLateReply(bucket, key, limits, cost));
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
