package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.Durations;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.PartialStoreOutageException;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreReconnectedException;
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
 * Time limits: once sent, a call must be answered within the {@link Builder#timeout
 * timeout}, as the connection's I/O thread sees it, so time this process spends too busy
 * to run does not count against Redis; a call that finds the connection being made waits
 * for it up to the {@link Builder#connectTimeout connect timeout}; a closed connection
 * fails calls at once. No call waits longer than both timeouts together. A stalled,
 * unreachable or restarting Redis surfaces as a {@link RateLimitStoreException}
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

	/** How long a heartbeat counts an instance as alive until told otherwise. */
	private static final Duration DEFAULT_HEARTBEAT_TIME_TO_LIVE = Duration.ofSeconds(3);

	/** Peeks that warm the decision path up when the store starts, at most. */
	private static final int WARM_UP_CALLS = 500;

	/** Failed warm-up calls in a row after which the warm-up gives up. */
	private static final int WARM_UP_FAILURES = 3;

	private static final String WARM_UP_BUCKET = "ratelimit-warm-up";

	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisRateLimitStore.class.getClassLoader());

	private static final int FIXED_ARGS = 2;

	/**
	 * The optional arguments a batch, charge or restore always sends: delay bound, now,
	 * TTL slack.
	 */
	private static final int BATCH_OPTIONAL_ARGS = 3;

	/** An argument the script reads as absent: unused, or an optional one left unset. */
	private static final String UNSET = "";

	private final ScriptRunner runner;

	private final RedisKeys keys;

	private final Duration timeout;

	private final Duration connectTimeout;

	/** The longest any call waits: for the connection, then for the reply. */
	private final long maxWaitNanos;

	private final LongAdder lateRefunds = new LongAdder();

	private final AtomicBoolean started = new AtomicBoolean();

	private volatile boolean ready;

	private final @Nullable TimeSource timeSource;

	private final @Nullable String expirySlackMillis;

	private final ConcurrentMap<LimitSpec, String[]> specArgs = new ConcurrentHashMap<>();

	/** Identifies this instance in the heartbeat. */
	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong heartbeats = new AtomicLong();

	private volatile Duration heartbeatTimeToLive = DEFAULT_HEARTBEAT_TIME_TO_LIVE;

	/** Whether {@link #start()} fails on a permanent failure instead of logging it. */
	private final boolean required;

	/** What the WARN of a failed start says decisions do meanwhile. */
	private final String whileUnavailable;

	/** Sends concurrent decisions on one key together; {@code null} when turned off. */
	private final @Nullable DecisionCoalescer coalescer;

	private RedisRateLimitStore(Builder builder) {
		this.runner = builder.runner.create(RedisRateLimitScript.load(), builder.connectTimeout, builder.timeout);
		this.keys = new RedisKeys(builder.keyPrefix);
		this.timeout = builder.timeout;
		this.connectTimeout = builder.connectTimeout;
		this.maxWaitNanos = builder.connectTimeout.toNanos() + builder.timeout.toNanos();
		this.timeSource = builder.timeSource;
		this.expirySlackMillis = builder.expirySlack.isZero() ? null : Long.toString(builder.expirySlack.toMillis());
		this.coalescer = builder.coalescing ? new DecisionCoalescer(new BatchScript(), this.maxWaitNanos) : null;
		this.required = builder.required;
		this.whileUnavailable = builder.whileUnavailable;
	}

	/**
	 * Starts a builder on the application's connection factory, whichever its client. On
	 * a {@link LettuceConnectionFactory} the store runs the script on a Lettuce
	 * connection of its own (see {@link #builder(LettuceConnectionFactory)}). On any
	 * other, it runs the script through Spring Data Redis, on the caller's thread: on a
	 * {@code JedisConnectionFactory} with a pool of its own whose read timeout is the
	 * store's {@link Builder#timeout timeout} and connect timeout its
	 * {@link Builder#connectTimeout connect timeout}; on another client with the client's
	 * own timeouts. Asynchronous calls then run on a bounded pool of the store's threads.
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
		start(this.connectTimeout);
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
		if (!this.started.compareAndSet(false, true)) {
			return;
		}
		long started = System.nanoTime();
		CompletableFuture<Void> connected = this.runner.start();
		try {
			connected.get(wait.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (ExecutionException ex) {
			Throwable cause = ScriptRunner.unwrap(causeOf(ex));
			RedisFailureCause failure = RedisFailureCause.of(cause);
			if (refusesScript(cause, failure)) {
				throw refused(failure, "SCRIPT LOAD");
			}
			if (this.required && failure.isPermanent()) {
				throw new RedisStoreUnavailableException(failure.describe() + "; the rate limit store requires Redis",
						failure, true);
			}
			logger.warn(failure.describe() + "; " + this.whileUnavailable
					+ ". Decisions go back to Redis on their own once it answers. " + failure.fix());
			return;
		}
		catch (TimeoutException ex) {
			logger.warn(RedisFailureCause.Kind.TIMEOUT.label() + ": no connection within " + Durations.readable(wait)
					+ " (ratelimit.redis.connect-timeout); the application starts without it, and rate limit "
					+ "decisions wait for the connection up to that long each, then: " + this.whileUnavailable);
			// Warm up once the connection is made, off the startup thread.
			connected.thenRun(() -> {
				Thread warmUp = new Thread(() -> {
					RedisFailureCause refusal = warmUp(started, wait);
					if (refusal != null) {
						logger.error(refused(refusal, "EVALSHA").getMessage());
					}
				}, "ratelimit-redis-warm-up");
				warmUp.setDaemon(true);
				warmUp.start();
			});
			return;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return;
		}
		RedisFailureCause refusal = warmUp(started, wait);
		if (refusal != null) {
			throw refused(refusal, "EVALSHA");
		}
	}

	/**
	 * Whether Redis answered but will not run the script: an error reply to
	 * {@code SCRIPT LOAD} other than a refused login (Spring Data Redis reports some of
	 * those as error replies too), or an ACL refusal.
	 */
	private static boolean refusesScript(Throwable cause, RedisFailureCause failure) {
		return failure.kind() == RedisFailureCause.Kind.AUTHORIZATION
				|| (cause instanceof ScriptRefusedException && !failure.isPermanent());
	}

	private static RedisStoreUnavailableException refused(RedisFailureCause failure, String command) {
		return new RedisStoreUnavailableException(failure.describe() + ": Redis refused " + command + " of "
				+ RedisRateLimitScript.LOCATION + ". The Redis rate limit store needs Lua scripting (SCRIPT LOAD, "
				+ "EVALSHA, TIME) on Redis 6.2 or later", failure, false);
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
		return this.ready;
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

	/**
	 * Runs the decision path (arguments, script, reply) until the JIT has compiled it, at
	 * most {@value #WARM_UP_CALLS} times and for at most {@code budget}.
	 * @return the ACL refusal of {@code EVALSHA} that stopped it, or {@code null}
	 */
	private @Nullable RedisFailureCause warmUp(long startedNanos, Duration budget) {
		long connectedNanos = System.nanoTime();
		long deadline = connectedNanos + budget.toNanos();
		List<List<LimitSpec>> limits = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			limits.add(List.of(LimitSpec.of(1, "1s", algorithm)));
		}
		int calls = 0;
		int failures = 0;
		while (calls < WARM_UP_CALLS && failures < WARM_UP_FAILURES && System.nanoTime() - deadline < 0) {
			try {
				peek(WARM_UP_BUCKET, "", limits.get(calls % limits.size()));
				failures = 0;
			}
			catch (RateLimitStoreException ex) {
				RedisFailureCause failure = RedisFailureCause.of(ex);
				if (failure.kind() == RedisFailureCause.Kind.AUTHORIZATION) {
					// SCRIPT LOAD allowed, EVALSHA not: no decision can ever run.
					return failure;
				}
				failures++;
				logger.debug("A warm-up call of the Redis rate limit store failed: " + ex.getMessage());
			}
			calls++;
		}
		this.ready = true;
		if (logger.isDebugEnabled()) {
			long now = System.nanoTime();
			logger.debug("Redis rate limit store started: connected and loaded the script in "
					+ TimeUnit.NANOSECONDS.toMillis(connectedNanos - startedNanos) + "ms, warmed up with " + calls
					+ " peeks in " + TimeUnit.NANOSECONDS.toMillis(now - connectedNanos) + "ms");
		}
		return null;
	}

	@Override
	public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		StoreArguments.check(bucket, key, limits, cost);
		if (this.coalescer != null) {
			return await(this.coalescer.decide(bucket, key, limits, cost, maxDelayMicros, false));
		}
		return toDecision(await(run("d", bucket, key, limits, cost, maxDelayMicros)), limits);
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
		CompletableFuture<List<Object>> reply = run("d", bucket, key, limits, cost, maxDelayMicros, true);
		return reply.orTimeout(this.maxWaitNanos, TimeUnit.NANOSECONDS).handle((result, ex) -> {
			if (ex != null) {
				throw failure(ScriptRunner.unwrap(ex));
			}
			return toDecision(result, limits);
		});
	}

	/**
	 * Decides the requests in one call of the batch operation, in order, whatever their
	 * number: what the coalescer sends for two or more. Tests compare it with one call
	 * per request.
	 */
	List<Decision> decideBatch(String bucket, String key, List<LimitSpec> limits, long[] costs,
			long[] maxDelaysMicros) {
		List<DecisionCoalescer.Request> batch = new ArrayList<>(costs.length);
		for (int i = 0; i < costs.length; i++) {
			StoreArguments.check(bucket, key, limits, costs[i]);
			batch.add(new DecisionCoalescer.Request(costs[i], maxDelaysMicros[i], this.runner.reconnects()));
		}
		List<Object> reply = await(
				runBatch(new DecisionCoalescer.LaneKey(bucket, key, limits), batch, false, (late) -> {
				}));
		return RedisBatchReply.batch(reply, batch, limits);
	}

	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		StoreArguments.check(bucket, key, limits, cost);
		await(run("r", bucket, key, limits, cost, NO_MAX_DELAY));
	}

	@Override
	public void charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		StoreArguments.check(bucket, key, limits, costs);
		await(runCharge("c", bucket, key, limits, costs));
	}

	@Override
	public boolean restore(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		StoreArguments.check(bucket, key, limits, costs);
		List<Object> reply = await(runCharge("u", bucket, key, limits, costs));
		return !reply.isEmpty() && ((Long) reply.get(0)) == 1L;
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
		this.heartbeatTimeToLive = timeToLive;
		return heartbeat(false);
	}

	private Heartbeat heartbeat(boolean countReset) {
		// An epoch of its own for each call: one that Redis lost and this instance set
		// again must differ from the one before.
		String[] args = { "h", this.instanceId, Long.toString(Math.max(1, this.heartbeatTimeToLive.toMillis())),
				this.instanceId + ":" + this.heartbeats.incrementAndGet(), countReset ? "1" : UNSET };
		List<Object> reply;
		try {
			reply = await(this.runner.run(this.keys.fleetKeys(), args, null));
		}
		catch (StoreReconnectedException ex) {
			// Not sent: the connection was made anew while it waited. Unlike a decision,
			// a heartbeat may go on the new connection at once: it is what checks it.
			reply = await(this.runner.run(this.keys.fleetKeys(), args, null));
		}
		return new Heartbeat(((Long) reply.get(0)).intValue(), (Long) reply.get(1), text(reply.get(2)),
				(Long) reply.get(3));
	}

	/**
	 * A bulk string of a reply as text: Spring Data Redis (the Jedis path) answers it as
	 * bytes, whose {@code toString()} differs on every call, which made every heartbeat
	 * read a new epoch.
	 */
	private static String text(Object bulk) {
		return (bulk instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(bulk);
	}

	/**
	 * Tells Redis this instance leaves, so that the others stop counting it at once
	 * rather than when its last heartbeat expires.
	 * @throws RateLimitStoreException when Redis cannot answer
	 */
	public void leave() {
		await(this.runner.run(this.keys.fleetKeys(), new String[] { "h", this.instanceId, "0", UNSET, UNSET }, null));
	}

	/**
	 * Returns the id under which this store's heartbeats count this instance.
	 * @return the id, random per store
	 */
	public String instanceId() {
		return this.instanceId;
	}

	@Override
	public Decision peek(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		return toDecision(await(run("p", bucket, key, limits, 1, NO_MAX_DELAY)), limits);
	}

	/**
	 * Forgets the key's state, and counts the reset in the instances' heartbeat, so that
	 * every instance on this Redis forgets what it remembered of keys (rejections, usage
	 * it would write back after an outage) by its next heartbeat.
	 */
	@Override
	public void reset(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		await(run("x", bucket, key, limits, 1, NO_MAX_DELAY));
		heartbeat(true);
	}

	@Override
	public String name() {
		return "redis";
	}

	@Override
	public void close() {
		this.runner.close();
	}

	/**
	 * Gives back the permits of a decision that allowed after its caller had been
	 * answered without it.
	 */
	private Consumer<List<Object>> lateDecision(String bucket, String key, List<LimitSpec> limits, long cost) {
		return (reply) -> {
			try {
				if (toDecision(reply, limits).allowed()) {
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
		run("r", bucket, key, limits, cost, NO_MAX_DELAY);
	}

	private CompletableFuture<List<Object>> run(String op, String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		return run(op, bucket, key, limits, cost, maxDelayMicros, false);
	}

	private CompletableFuture<List<Object>> run(String op, String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, boolean async) {
		Consumer<List<Object>> lateReply = op.equals("d") ? lateDecision(bucket, key, limits, cost) : null;
		return run(op, bucket, key, limits, cost, maxDelayMicros, async, lateReply);
	}

	private CompletableFuture<List<Object>> run(String op, String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, boolean async, @Nullable Consumer<List<Object>> lateReply) {
		// The optional arguments follow the limits: unset ones as "", trailing unset ones
		// not at all.
		@Nullable String[] optional = { (maxDelayMicros == NO_MAX_DELAY) ? null : Long.toString(maxDelayMicros),
				(this.timeSource != null) ? Long.toString(this.timeSource.nowMicros()) : null, this.expirySlackMillis };
		int sent = optional.length;
		while (sent > 0 && optional[sent - 1] == null) {
			sent--;
		}
		String[] args = arguments(op, Long.toString(cost), limits, sent, 0);
		int at = args.length - sent;
		for (int i = 0; i < sent; i++) {
			String value = optional[i];
			args[at + i] = (value != null) ? value : UNSET;
		}
		String[] keys = this.keys.keys(bucket, key, limits);
		return async ? this.runner.runAsync(keys, args, lateReply) : this.runner.run(keys, args, lateReply);
	}

	/**
	 * Sends a batch of decisions as one call of operation {@code b} (see the header of
	 * {@code rate_limit.lua}): the three optional arguments always, then the requests as
	 * runs of identical ones, each its length, cost and delay bound.
	 */
	private CompletableFuture<List<Object>> runBatch(DecisionCoalescer.LaneKey lane,
			List<DecisionCoalescer.Request> batch, boolean async, Consumer<List<Object>> lateReply) {
		int[] runs = RedisBatchReply.runLengths(batch);
		String[] args = arguments("b", Integer.toString(batch.size()), lane.limits(), BATCH_OPTIONAL_ARGS,
				3 * runs.length);
		int at = args.length - BATCH_OPTIONAL_ARGS - 3 * runs.length;
		args[at++] = UNSET;
		args[at++] = (this.timeSource != null) ? Long.toString(this.timeSource.nowMicros()) : UNSET;
		args[at++] = (this.expirySlackMillis != null) ? this.expirySlackMillis : UNSET;
		int first = 0;
		for (int run : runs) {
			DecisionCoalescer.Request request = batch.get(first);
			args[at++] = Integer.toString(run);
			args[at++] = Long.toString(request.cost);
			args[at++] = (request.maxDelayMicros == NO_MAX_DELAY) ? UNSET : Long.toString(request.maxDelayMicros);
			first += run;
		}
		String[] keys = this.keys.keys(lane.bucket(), lane.key(), lane.limits());
		return async ? this.runner.runAsync(keys, args, lateReply) : this.runner.run(keys, args, lateReply);
	}

	/**
	 * Sends a charge ({@code c}) or restore ({@code u}): the three optional arguments
	 * always, then a cost per limit.
	 */
	private CompletableFuture<List<Object>> runCharge(String op, String bucket, String key, List<LimitSpec> limits,
			long[] costs) {
		String[] args = arguments(op, "0", limits, BATCH_OPTIONAL_ARGS, costs.length);
		int at = args.length - BATCH_OPTIONAL_ARGS - costs.length;
		args[at++] = UNSET;
		args[at++] = (this.timeSource != null) ? Long.toString(this.timeSource.nowMicros()) : UNSET;
		args[at++] = (this.expirySlackMillis != null) ? this.expirySlackMillis : UNSET;
		for (long cost : costs) {
			args[at++] = Long.toString(cost);
		}
		return this.runner.run(this.keys.keys(bucket, key, limits), args, null);
	}

	/**
	 * The script's arguments with the operation, the cost and the limits filled in, and
	 * room for {@code more} after them.
	 */
	private String[] arguments(String op, String cost, List<LimitSpec> limits, int optional, int more) {
		String[][] limitArgs = new String[limits.size()][];
		int length = FIXED_ARGS + optional + more;
		for (int i = 0; i < limitArgs.length; i++) {
			limitArgs[i] = this.specArgs.computeIfAbsent(limits.get(i), RedisRateLimitStore::toArgs);
			length += limitArgs[i].length;
		}
		String[] args = new String[length];
		args[0] = op;
		args[1] = cost;
		int at = FIXED_ARGS;
		for (String[] limit : limitArgs) {
			System.arraycopy(limit, 0, args, at, limit.length);
			at += limit.length;
		}
		return args;
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
				return new String[] { code, Long.toString(spec.burst()), Long.toString(spec.limit()),
						Long.toString(spec.windowMicros()) };
			case SLIDING_WINDOW_COUNTER:
				return new String[] { code, Long.toString(spec.limit()), Integer.toString(spec.segments()),
						Long.toString(spec.segmentMicros()) };
			default:
				return new String[] { code, Long.toString(spec.limit()), Long.toString(spec.windowMicros()) };
		}
	}

	private <T> T await(CompletableFuture<T> reply) {
		try {
			// The runner times the call out; this bound only guards against an I/O thread
			// that never runs again.
			return reply.get(this.maxWaitNanos, TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			reply.completeExceptionally(ex);
			throw failure(ex);
		}
		catch (ExecutionException ex) {
			throw failure(ScriptRunner.unwrap(causeOf(ex)));
		}
		catch (InterruptedException ex) {
			reply.completeExceptionally(ex);
			Thread.currentThread().interrupt();
			throw new RateLimitStoreException("Interrupted while waiting for Redis", ex, false);
		}
	}

	private static Throwable causeOf(ExecutionException ex) {
		return (ex.getCause() != null) ? ex.getCause() : ex;
	}

	private RateLimitStoreException failure(Throwable cause) {
		if (cause instanceof RateLimitStoreException storeException) {
			return storeException;
		}
		if (cause instanceof ScriptTimeoutException timeout) {
			boolean sent = timeout.waitedFor() == ScriptTimeoutException.Wait.REPLY;
			String message = sent
					? "Redis did not answer within " + Durations.readable(this.timeout) + " (ratelimit.redis.timeout)"
					: "No Redis connection within " + Durations.readable(this.connectTimeout)
							+ " (ratelimit.redis.connect-timeout)";
			// A late reply still tells what Redis did (see lateDecision): known in the
			// end.
			return new RateLimitStoreException(message, cause, true);
		}
		if (cause instanceof TimeoutException) {
			return new RateLimitStoreException(
					"No answer from Redis within " + Durations.readable(Duration.ofNanos(this.maxWaitNanos))
							+ " (ratelimit.redis.connect-timeout + ratelimit.redis.timeout)",
					cause, true);
		}
		if (cause instanceof ClusterMasterDownException down) {
			return new PartialStoreOutageException(down.getMessage() + "; the rate limit call failed", down);
		}
		String clusterDown = clusterDown(cause);
		if (clusterDown != null) {
			// A Redis Cluster node that does not serve the key's slot now: one whose
			// master is down (cluster-require-full-coverage yes, until a replica takes
			// over) or that just restarted. Fast, and not every node says so: the
			// failure mode answers for this key without opening the breaker for all.
			return new PartialStoreOutageException(
					"Redis Cluster answered " + clusterDown + " for the key's slot; the rate limit call failed", cause);
		}
		if (cause instanceof ScriptOutcomeUnknownException unknown) {
			return new RateLimitStoreException(
					RedisFailureCause.of(Objects.requireNonNull(unknown.getCause())).describe()
							+ " after the rate limit call was sent; Redis may have run it",
					unknown, false, true);
		}
		return new RateLimitStoreException(RedisFailureCause.of(cause).describe() + "; the rate limit call failed",
				cause, false);
	}

	/**
	 * The {@code CLUSTERDOWN} error reply in {@code failure}'s causes (Lettuce's
	 * exception, or one a Spring Data Redis driver wrapped it in), or {@code null}.
	 */
	private static @Nullable String clusterDown(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			int at = (message != null) ? message.indexOf("CLUSTERDOWN") : -1;
			if (message != null && at >= 0) {
				return message.substring(at).lines().findFirst().orElse("CLUSTERDOWN");
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return null;
	}

	private static Decision toDecision(List<Object> reply, List<LimitSpec> limits) {
		return RedisBatchReply.single(reply, limits);
	}

	/**
	 * The store's side of {@link DecisionCoalescer}: a batch of one is a plain decision,
	 * larger ones are operation {@code b}.
	 */
	private final class BatchScript implements DecisionCoalescer.Script {

		@Override
		public CompletableFuture<List<Object>> send(DecisionCoalescer.LaneKey lane,
				List<DecisionCoalescer.Request> batch, boolean async, Consumer<List<Object>> lateReply) {
			if (batch.size() == 1) {
				DecisionCoalescer.Request request = batch.get(0);
				return run("d", lane.bucket(), lane.key(), lane.limits(), request.cost, request.maxDelayMicros, async,
						lateReply);
			}
			return runBatch(lane, batch, async, lateReply);
		}

		@Override
		public List<Decision> decisions(List<Object> reply, List<DecisionCoalescer.Request> batch,
				List<LimitSpec> limits) {
			return (batch.size() == 1) ? List.of(toDecision(reply, limits))
					: RedisBatchReply.batch(reply, batch, limits);
		}

		@Override
		public RuntimeException failure(Throwable cause) {
			return RedisRateLimitStore.this.failure(cause);
		}

		@Override
		public long reconnects() {
			return RedisRateLimitStore.this.runner.reconnects();
		}

		@Override
		public void giveBack(DecisionCoalescer.LaneKey lane, long cost) {
			try {
				RedisRateLimitStore.this.giveBack(lane.bucket(), lane.key(), lane.limits(), cost);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not give back the permits of a late Redis decision", ex);
			}
		}

	}

	/**
	 * Builds a {@link RedisRateLimitStore}.
	 */
	public static final class Builder {

		private final ScriptRunner.Factory runner;

		private String keyPrefix = "rl";

		private Duration timeout = DEFAULT_TIMEOUT;

		private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;

		private @Nullable TimeSource timeSource;

		private Duration expirySlack = Duration.ZERO;

		private boolean coalescing = true;

		private boolean required;

		private String whileUnavailable = "rate limit decisions use the failure mode until Redis answers";

		private Builder(ScriptRunner.Factory runner) {
			this.runner = runner;
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
		 * Sets the longest Redis may take to answer a call once it is sent, as the
		 * connection's I/O thread sees it (on Jedis: the socket read timeout); 100ms by
		 * default. Past it the call fails with a timeout.
		 * @param timeout the timeout, positive
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			this.timeout = positive("timeout", timeout);
			return this;
		}

		/**
		 * Sets the longest {@link RedisRateLimitStore#start()} waits for Redis, and the
		 * longest a call waits for a connection being made; 5s by default.
		 * @param connectTimeout the timeout, positive
		 * @return this builder
		 */
		public Builder connectTimeout(Duration connectTimeout) {
			this.connectTimeout = positive("connectTimeout", connectTimeout);
			return this;
		}

		private static Duration positive(String name, @Nullable Duration value) {
			if (value == null || value.isNegative() || value.isZero()) {
				throw new IllegalArgumentException(name + " must be positive but was " + value);
			}
			return value;
		}

		/**
		 * Sets the clock passed to the script instead of Redis {@code TIME}; {@code null}
		 * (the default) uses Redis time, which every instance shares. Instances whose
		 * clocks differ by less than a window stay within their limits: no key goes back
		 * to an older window or gives time back for a caller whose clock is behind, and
		 * the window algorithms' keys live one window longer.
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
		 * Sets whether concurrent decisions on the same bucket, key and limits go to
		 * Redis together: while one such call is in flight, the decisions that arrive
		 * wait for it and then go as one script call (up to 128 of them), which decides
		 * each in order as if it had been sent alone. A lone decision is sent at once.
		 * Saves Redis calls on hot keys, never changes a decision; {@code true} by
		 * default.
		 * @param coalescing whether to coalesce decisions
		 * @return this builder
		 */
		public Builder coalescing(boolean coalescing) {
			this.coalescing = coalescing;
			return this;
		}

		/**
		 * Sets whether the application must have Redis: then {@link #build() the store's}
		 * {@code start()} fails with a {@link RedisStoreUnavailableException} when Redis
		 * fails for a reason waiting will not fix (authentication, authorisation, TLS
		 * trust, unknown host), instead of logging it; {@code false} by default.
		 * @param required whether Redis is required
		 * @return this builder
		 */
		public Builder required(boolean required) {
			this.required = required;
			return this;
		}

		/**
		 * Sets what the warning of a start without Redis says decisions do meanwhile, as
		 * the layer in front of the store handles failures (per instance limits, say).
		 * @param whileUnavailable the text, a clause without a final full stop
		 * @return this builder
		 */
		public Builder whileUnavailable(String whileUnavailable) {
			this.whileUnavailable = Objects.requireNonNull(whileUnavailable, "'whileUnavailable' must not be null");
			return this;
		}

		/**
		 * Builds the store; nothing connects before {@link RedisRateLimitStore#start()}
		 * or the first call.
		 * @return the store
		 */
		public RedisRateLimitStore build() {
			return new RedisRateLimitStore(this);
		}

	}

}
