package io.github.ratelimit.failover;

import java.util.function.LongSupplier;

import io.github.ratelimit.status.BreakerState;

/**
 * Decides whether a call may go to the store, from how the store has been answering.
 * <p>
 * It opens on <em>sustained</em> failure only: a failing streak starts with a failure and
 * lasts while every tenth of {@link BreakerSettings#window() window} that saw calls had
 * at least {@link BreakerSettings#failureRateThreshold() failureRateThreshold} percent of
 * them fail; the breaker opens when a failure finds the streak at least one window old.
 * So a burst of failures shorter than the window (a Redis hiccup, a busy instance) leaves
 * it closed: those calls go to the failure mode one by one, and the next call tries the
 * store again. Stretches without calls neither extend nor end a streak.
 * <p>
 * Once open, calls skip the store for {@link BreakerSettings#waitInOpenState()}; then
 * {@link BreakerSettings#probes()} calls try it (half-open) while the others still skip
 * it. The breaker closes when every probe succeeded and opens again at the first probe
 * that failed.
 * <p>
 * Thread-safe. A success while no streak runs takes no lock.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class CircuitBreaker {

	private static final int SLICES = 10;

	private static final long NONE = Long.MIN_VALUE;

	private final BreakerSettings settings;

	private final LongSupplier nanoTime;

	private final long windowNanos;

	private final long sliceNanos;

	private final long waitNanos;

	private final Listener listener;

	private volatile BreakerState state = BreakerState.CLOSED;

	/** When the failing streak started ({@link #NONE}: no streak). */
	private volatile long streakStart = NONE;

	private long slice = NONE;

	private long sliceCalls;

	private long sliceFailures;

	private long openedAt;

	private int probesGiven;

	private int probesSucceeded;

	/**
	 * Creates a breaker on the system clock.
	 * @param settings the settings
	 * @param listener told of every state change
	 */
	public CircuitBreaker(BreakerSettings settings, Listener listener) {
		this(settings, listener, System::nanoTime);
	}

	/**
	 * Creates a breaker.
	 * @param settings the settings
	 * @param listener told of every state change
	 * @param nanoTime the clock, in nanoseconds like {@link System#nanoTime()}
	 */
	public CircuitBreaker(BreakerSettings settings, Listener listener, LongSupplier nanoTime) {
		this.settings = settings;
		this.listener = listener;
		this.nanoTime = nanoTime;
		this.windowNanos = settings.window().toNanos();
		this.sliceNanos = Math.max(1, this.windowNanos / SLICES);
		this.waitNanos = settings.waitInOpenState().toNanos();
	}

	/**
	 * Returns the settings.
	 * @return the settings
	 */
	public BreakerSettings settings() {
		return this.settings;
	}

	/**
	 * Returns the current state; an open breaker whose wait is over reports
	 * {@link BreakerState#HALF_OPEN} only once a call asked for permission.
	 * @return the state
	 */
	public BreakerState state() {
		return this.state;
	}

	/**
	 * Asks whether a call may go to the store. A call that was allowed must report its
	 * outcome with {@link #onSuccess()}, {@link #onFailure()} or {@link #onIgnored()}.
	 * @return {@code true} when the call may try the store
	 */
	public boolean tryAcquire() {
		if (this.state == BreakerState.CLOSED) {
			return true;
		}
		synchronized (this) {
			if (this.state == BreakerState.OPEN && this.nanoTime.getAsLong() - this.openedAt >= this.waitNanos) {
				transition(BreakerState.HALF_OPEN);
				this.probesGiven = 0;
				this.probesSucceeded = 0;
			}
			if (this.state == BreakerState.HALF_OPEN && this.probesGiven < this.settings.probes()) {
				this.probesGiven++;
				return true;
			}
			return this.state == BreakerState.CLOSED;
		}
	}

	/**
	 * Records that an allowed call got the store's answer.
	 */
	public void onSuccess() {
		if (this.state == BreakerState.CLOSED && this.streakStart == NONE) {
			return;
		}
		synchronized (this) {
			if (this.state == BreakerState.HALF_OPEN) {
				if (++this.probesSucceeded >= this.settings.probes()) {
					close();
				}
				return;
			}
			if (this.state == BreakerState.CLOSED) {
				record(false, this.nanoTime.getAsLong());
			}
		}
	}

	/**
	 * Records that an allowed call failed: the store did not answer in time, refused or
	 * lost the connection, or answered with an error.
	 */
	public synchronized void onFailure() {
		long now = this.nanoTime.getAsLong();
		if (this.state == BreakerState.HALF_OPEN) {
			open(now);
			return;
		}
		if (this.state != BreakerState.CLOSED) {
			return;
		}
		record(true, now);
		if (this.streakStart == NONE) {
			this.streakStart = now;
		}
		if (now - this.streakStart >= this.windowNanos && failing(this.sliceCalls, this.sliceFailures)) {
			open(now);
		}
	}

	/**
	 * Records that the store answered a call made outside the breaker (a heartbeat): it
	 * works, so an open or half-open breaker closes now, rather than waiting for a
	 * request to probe it. Once Redis is back, requests go to it again without any of
	 * them paying a failed probe first.
	 */
	public void onStoreAnswered() {
		if (this.state == BreakerState.CLOSED) {
			return;
		}
		synchronized (this) {
			if (this.state != BreakerState.CLOSED) {
				close();
			}
		}
	}

	/**
	 * Records that an allowed call ended without telling anything about the store (it
	 * failed before reaching it), giving back a probe it may have held.
	 */
	public synchronized void onIgnored() {
		if (this.state == BreakerState.HALF_OPEN && this.probesGiven > 0) {
			this.probesGiven--;
		}
	}

	private void record(boolean failure, long now) {
		long current = Math.floorDiv(now, this.sliceNanos);
		if (current != this.slice) {
			// A finished slice where most calls succeeded ends the streak; one without
			// calls says nothing.
			if (this.sliceCalls > 0 && !failing(this.sliceCalls, this.sliceFailures)) {
				this.streakStart = NONE;
			}
			this.slice = current;
			this.sliceCalls = 0;
			this.sliceFailures = 0;
		}
		this.sliceCalls++;
		if (failure) {
			this.sliceFailures++;
		}
	}

	private boolean failing(long calls, long failures) {
		return failures * 100 >= (long) this.settings.failureRateThreshold() * calls;
	}

	private void open(long now) {
		this.openedAt = now;
		this.streakStart = NONE;
		transition(BreakerState.OPEN);
	}

	private void close() {
		this.streakStart = NONE;
		this.slice = NONE;
		this.sliceCalls = 0;
		this.sliceFailures = 0;
		transition(BreakerState.CLOSED);
	}

	private void transition(BreakerState to) {
		BreakerState from = this.state;
		if (from != to) {
			this.state = to;
			this.listener.onStateChange(from, to);
		}
	}

	/**
	 * Told of every state change, on the thread that caused it.
	 */
	@FunctionalInterface
	public interface Listener {

		/**
		 * Called after the state changed.
		 * @param from the old state
		 * @param to the new state
		 */
		void onStateChange(BreakerState from, BreakerState to);

	}

}
