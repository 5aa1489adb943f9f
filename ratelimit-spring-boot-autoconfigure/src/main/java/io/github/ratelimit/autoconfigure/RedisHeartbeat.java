package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

import io.github.ratelimit.Durations;
import io.github.ratelimit.bucket.LiveLimits;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Every {@code ratelimit.redis.heartbeat-interval}, on a daemon thread of its own, tells
 * Redis this instance is alive and reads what the instances share, in one script call
 * ({@link RedisRateLimitStore#heartbeat(Duration)}), and hands what it read on: the
 * failover store learns how many instances share each limit, whether a key was reset
 * through another instance or Redis lost its data, and whether Redis answers at all, so
 * that health knows without a request; live limit changes are applied when their version
 * moved.
 * <p>
 * A heartbeat rather than Redis pub/sub: there is no subscription to lose on a reconnect,
 * and an instance cut off from Redis catches up on its first heartbeat that succeeds. The
 * first heartbeat runs when the context starts, before the web server takes requests, so
 * a restarted instance starts with the live changes (unless Redis does not answer within
 * the connect timeout; it then catches up later). A heartbeat that fails is logged once,
 * and again once they succeed.
 */
class RedisHeartbeat implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RedisHeartbeat.class);

	/** Heartbeats an instance may miss before the others stop counting it. */
	private static final int MISSED_BEATS = 3;

	private final ObjectProvider<RateLimitStore> store;

	private final LiveLimits liveLimits;

	private final Duration interval;

	private final Duration startupWait;

	private @Nullable ScheduledExecutorService executor;

	/** The live limits' version last applied; {@code -1} before the first. */
	private long appliedVersion = -1;

	private volatile boolean failing;

	/** One heartbeat at a time: the schedule's, or one a decision waits for. */
	private final Object beating = new Object();

	/** Checked when Redis first answers and each time it answers again; may be absent. */
	private final @Nullable RedisEvictionPolicy evictionPolicy;

	/**
	 * Reads the eviction policy off the heartbeat: it goes through the application's
	 * connection factory, whose connection may still be reconnecting (with its own,
	 * longer timeout) when the store's answers again, and a decision may be waiting for
	 * the heartbeat. One read at a time; a thread only while there is one to make.
	 */
	/**
	 * Whether {@link #start()} is done: requests may wait for a heartbeat from then on.
	 */
	private volatile boolean started;

	private final ThreadPoolExecutor evictionChecks = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS,
			new LinkedBlockingQueue<>(1), (task) -> {
				Thread thread = new Thread(task, "ratelimit-eviction-check");
				thread.setDaemon(true);
				return thread;
			}, new ThreadPoolExecutor.DiscardPolicy());

	/**
	 * Whether Redis has answered since the last failure (or since the start). Guarded by
	 * {@link #beating}.
	 */
	private boolean answered;

	/** What runs when Redis answers again after a failure. */
	private final Runnable answersAgain;

	RedisHeartbeat(ObjectProvider<RateLimitStore> store, LiveLimits liveLimits, Duration interval,
			Duration startupWait) {
		this(store, liveLimits, interval, startupWait, null);
	}

	RedisHeartbeat(ObjectProvider<RateLimitStore> store, LiveLimits liveLimits, Duration interval, Duration startupWait,
			@Nullable RedisEvictionPolicy evictionPolicy) {
		this(store, liveLimits, interval, startupWait, evictionPolicy, () -> {
		});
	}

	/**
	 * Creates the heartbeat.
	 * @param answersAgain runs when Redis answers again after a failure (not at startup);
	 * must not block
	 */
	RedisHeartbeat(ObjectProvider<RateLimitStore> store, LiveLimits liveLimits, Duration interval, Duration startupWait,
			@Nullable RedisEvictionPolicy evictionPolicy, Runnable answersAgain) {
		this.answersAgain = answersAgain;
		this.store = store;
		this.liveLimits = liveLimits;
		this.interval = interval;
		this.startupWait = startupWait;
		this.evictionPolicy = evictionPolicy;
	}

	@Override
	public synchronized void start() {
		if (this.executor != null || redisStore() == null) {
			return;
		}
		ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-heartbeat");
			thread.setDaemon(true);
			return thread;
		});
		this.executor = executor;
		FailoverRateLimitStore failover = failoverStore();
		RedisRateLimitStore redis = redisStore();
		if (failover != null && redis != null) {
			failover.checkDataWith(this::beat);
			redis.onReconnect(failover::primaryReconnected);
		}
		Future<?> first = executor.submit(this::beat);
		try {
			first.get(this.startupWait.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException | ExecutionException ex) {
			// beat() logs its own failure; a slow Redis is caught up with later.
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.started = true;
		long millis = Math.max(1, this.interval.toMillis());
		executor.scheduleWithFixedDelay(this::beat, millis, millis, TimeUnit.MILLISECONDS);
	}

	void beat() {
		synchronized (this.beating) {
			beatNow();
		}
	}

	private void beatNow() {
		RedisRateLimitStore redis = redisStore();
		if (redis == null) {
			return;
		}
		FailoverRateLimitStore failover = failoverStore();
		Heartbeat heartbeat;
		try {
			heartbeat = redis.heartbeat(this.interval.multipliedBy(MISSED_BEATS));
		}
		catch (RuntimeException ex) {
			if (failover != null) {
				failover.heartbeatFailed(ex);
			}
			this.answered = false;
			if (!this.failing) {
				this.failing = true;
				logger.warn("Rate limit heartbeat to Redis failed (" + ex.getMessage()
						+ "); health reports the store degraded until it succeeds, tried every "
						+ Durations.readable(this.interval));
			}
			return;
		}
		if (this.failing) {
			this.failing = false;
			logger.info("Rate limit heartbeat to Redis succeeds again");
		}
		if (failover != null) {
			failover.heartbeat(heartbeat);
		}
		applyLiveLimits(heartbeat.liveLimitsVersion());
		if (!this.answered) {
			// The first answer, or one after a failure: maybe another server (a restart,
			// a failover), whose eviction policy may differ.
			this.answered = true;
			if (this.evictionPolicy != null && !this.started) {
				// At startup, before any request: the summary and health show it from the
				// start.
				this.evictionPolicy.check();
			}
			else if (this.evictionPolicy != null) {
				this.evictionChecks.execute(this.evictionPolicy::check);
			}
			if (this.started) {
				// The permits of concurrency limits counted in this instance meanwhile
				// move to Redis now, not each at its next renewal.
				this.answersAgain.run();
			}
		}
	}

	private void applyLiveLimits(long version) {
		if (version == this.appliedVersion) {
			return;
		}
		try {
			this.liveLimits.refresh();
			this.appliedVersion = version;
		}
		catch (RuntimeException ex) {
			logger.warn("Could not read live limit changes from Redis (" + ex
					+ "); the limits stay as they are and are read again at the next heartbeat");
		}
	}

	private @Nullable FailoverRateLimitStore failoverStore() {
		return (this.store.getIfUnique() instanceof FailoverRateLimitStore failover) ? failover : null;
	}

	private @Nullable RedisRateLimitStore redisStore() {
		return RedisStoreLifecycle.redisStoreOf(this.store.getIfUnique());
	}

	/**
	 * Stops the heartbeats, and tells Redis this instance leaves (before the store closes
	 * its connection, a phase later).
	 */
	@Override
	public synchronized void stop() {
		ScheduledExecutorService executor = this.executor;
		if (executor == null) {
			return;
		}
		executor.shutdownNow();
		this.evictionChecks.shutdownNow();
		this.executor = null;
		RedisRateLimitStore redis = redisStore();
		if (redis != null && !this.failing) {
			try {
				redis.leave();
			}
			catch (RuntimeException ex) {
				logger.debug("Could not tell Redis this instance leaves", ex);
			}
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.executor != null;
	}

	@Override
	public int getPhase() {
		// After the Redis store has connected, before the web server.
		return RedisStoreLifecycle.PHASE + 1;
	}

}
