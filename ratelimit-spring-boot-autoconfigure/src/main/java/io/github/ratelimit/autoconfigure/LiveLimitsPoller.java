package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

import io.github.ratelimit.bucket.LiveLimits;

/**
 * Applies live limit changes made by other instances: reads the shared store's version
 * every {@code ratelimit.redis.live-limits-poll-interval} on a daemon thread, and the
 * overrides when it moved. Polling, rather than Redis pub/sub, needs no subscription to
 * keep alive across reconnects and cannot miss a change: an instance that was cut off
 * from Redis catches up on its first successful poll. The first poll runs when the
 * context starts, before the web server takes requests, so a restarted instance starts
 * with the overrides (unless Redis does not answer within the connect timeout; it then
 * catches up later). A failed poll is logged once, and again once polls succeed.
 */
class LiveLimitsPoller implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(LiveLimitsPoller.class);

	private final LiveLimits liveLimits;

	private final Duration interval;

	private final Duration startupWait;

	private @Nullable ScheduledExecutorService executor;

	private volatile boolean failing;

	LiveLimitsPoller(LiveLimits liveLimits, Duration interval, Duration startupWait) {
		this.liveLimits = liveLimits;
		this.interval = interval;
		this.startupWait = startupWait;
	}

	@Override
	public synchronized void start() {
		if (this.executor != null || !this.liveLimits.shared()) {
			return;
		}
		ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-live-limits");
			thread.setDaemon(true);
			return thread;
		});
		this.executor = executor;
		Future<?> first = executor.submit(this::poll);
		try {
			first.get(this.startupWait.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException | ExecutionException ex) {
			// poll() logs its own failure; a slow Redis is caught up with later.
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		long millis = Math.max(1, this.interval.toMillis());
		executor.scheduleWithFixedDelay(this::poll, millis, millis, TimeUnit.MILLISECONDS);
	}

	void poll() {
		try {
			this.liveLimits.refresh();
			if (this.failing) {
				this.failing = false;
				logger.info("Live limit changes are read from Redis again");
			}
		}
		catch (RuntimeException ex) {
			if (!this.failing) {
				this.failing = true;
				logger.warn("Could not read live limit changes from Redis (" + ex
						+ "); the limits stay as they are and are read again every " + this.interval);
			}
		}
	}

	@Override
	public synchronized void stop() {
		ScheduledExecutorService executor = this.executor;
		if (executor != null) {
			executor.shutdownNow();
			this.executor = null;
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
