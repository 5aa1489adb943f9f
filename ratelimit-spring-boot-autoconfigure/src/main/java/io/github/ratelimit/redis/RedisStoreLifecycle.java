package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Durations;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreReconnectedException;

/**
 * The life of a {@link RedisRateLimitStore} beside its decisions: connecting, loading the
 * script and warming the decision path up when it starts; the instance's heartbeats while
 * it runs, and its leaving.
 */
final class RedisStoreLifecycle {

	/** How long a heartbeat counts an instance as alive until told otherwise. */
	private static final Duration DEFAULT_HEARTBEAT_TIME_TO_LIVE = Duration.ofSeconds(3);

	/** Peeks that warm the decision path up when the store starts, at most. */
	private static final int WARM_UP_CALLS = 500;

	/** Failed warm-up calls in a row after which the warm-up gives up. */
	private static final int WARM_UP_FAILURES = 3;

	private static final String WARM_UP_BUCKET = "ratelimit-warm-up";

	/** The store's: what operators know to look for. */
	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private final ScriptRunner runner;

	private final RedisDecisionProtocol protocol;

	private final RedisScriptCalls calls;

	/** The store whose decision path the warm-up runs. */
	private final RateLimitStore store;

	private final Duration connectTimeout;

	/** Whether {@link #start} fails on a permanent failure instead of logging it. */
	private final boolean required;

	/** What the WARN of a failed start says decisions do meanwhile. */
	private final String whileUnavailable;

	private final AtomicBoolean started = new AtomicBoolean();

	private volatile boolean ready;

	/** Identifies this instance in the heartbeat. */
	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong heartbeats = new AtomicLong();

	private volatile Duration heartbeatTimeToLive = DEFAULT_HEARTBEAT_TIME_TO_LIVE;

	/**
	 * Creates the lifecycle of one store.
	 * @param runner connects and loads the script
	 * @param calls sends the heartbeats
	 * @param protocol what a heartbeat sends
	 * @param store the store whose decision path the warm-up runs
	 * @param settings the store's settings
	 */
	RedisStoreLifecycle(ScriptRunner runner, RedisScriptCalls calls, RedisDecisionProtocol protocol,
			RateLimitStore store, RedisStoreBuilder.Settings settings) {
		this.runner = runner;
		this.calls = calls;
		this.protocol = protocol;
		this.store = store;
		this.connectTimeout = settings.connectTimeout();
		this.required = settings.required();
		this.whileUnavailable = settings.whileUnavailable();
	}

	/** See {@link RedisRateLimitStore#start()}. */
	void start() {
		start(this.connectTimeout);
	}

	/** See {@link RedisRateLimitStore#start(Duration)}. */
	void start(Duration wait) {
		if (!this.started.compareAndSet(false, true)) {
			return;
		}
		long started = System.nanoTime();
		CompletableFuture<Void> connected = this.runner.start();
		try {
			connected.get(wait.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (ExecutionException ex) {
			Throwable cause = ScriptRunner.unwrap(RedisScriptCalls.causeOf(ex));
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

	/** See {@link RedisRateLimitStore#isStarted()}. */
	boolean isStarted() {
		return this.ready;
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
				this.store.peek(WARM_UP_BUCKET, "", limits.get(calls % limits.size()));
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

	/** See {@link RedisRateLimitStore#heartbeat(Duration)}. */
	Heartbeat heartbeat(Duration timeToLive) {
		this.heartbeatTimeToLive = timeToLive;
		return heartbeat(false);
	}

	/**
	 * Beats with the last time to live, counting a key reset: every instance then forgets
	 * what it remembered of keys by its next heartbeat.
	 */
	void countReset() {
		heartbeat(true);
	}

	private Heartbeat heartbeat(boolean countReset) {
		// An epoch of its own for each call: one that Redis lost and this instance set
		// again must differ from the one before.
		RedisDecisionProtocol.Call beat = this.protocol.heartbeat(this.instanceId, this.heartbeatTimeToLive,
				this.instanceId + ":" + this.heartbeats.incrementAndGet(), countReset);
		List<Object> reply;
		try {
			reply = this.calls.call(beat);
		}
		catch (StoreReconnectedException ex) {
			// Not sent: the connection was made anew while it waited. Unlike a decision,
			// a heartbeat may go on the new connection at once: it is what checks it.
			reply = this.calls.call(beat);
		}
		return RedisDecisionProtocol.heartbeat(reply);
	}

	/** See {@link RedisRateLimitStore#leave()}. */
	void leave() {
		this.calls.call(this.protocol.leave(this.instanceId));
	}

	/** See {@link RedisRateLimitStore#instanceId()}. */
	String instanceId() {
		return this.instanceId;
	}

}
