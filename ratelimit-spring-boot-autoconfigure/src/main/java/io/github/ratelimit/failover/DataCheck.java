package io.github.ratelimit.failover;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Whether the primary may have lost its data since it was last checked, and the check.
 * <p>
 * A primary that failed, or whose connection was made anew, may be a server that
 * restarted empty; its heartbeat tells (the epoch it keeps changes), but only every
 * heartbeat interval. A key decided on an empty primary before then would start from a
 * full limit, and the usage written back afterwards would find the key taken and be
 * dropped. So once the primary failed or reconnected, decisions wait for one heartbeat
 * first: one call of the script, made by one caller while the others wait for its answer;
 * a check that failed is not tried again for {@value #RETRY_MILLIS} ms.
 */
final class DataCheck {

	private static final long RETRY_MILLIS = 100;

	private final LongSupplier nanoTime;

	private final Runnable failed;

	private final Object lock = new Object();

	private volatile boolean needed;

	private volatile @Nullable Runnable check;

	/** The check under way or last made. Guarded by {@link #lock}. */
	private @Nullable CompletableFuture<Boolean> attempt;

	/** When the last check ended. Guarded by {@link #lock}. */
	private long endedNanos;

	/**
	 * Creates the check.
	 * @param nanoTime the clock
	 * @param failed runs once for each check that fails (not for each caller that waited
	 * for it): a failed call of the primary
	 */
	DataCheck(LongSupplier nanoTime, Runnable failed) {
		this.nanoTime = nanoTime;
		this.failed = failed;
	}

	/**
	 * Sets what checks: a heartbeat, which calls {@link #passed()} when it succeeds.
	 */
	void checkWith(Runnable check) {
		this.check = check;
	}

	/**
	 * Takes note that the primary may have lost its data since the last check.
	 */
	void needed() {
		this.needed = true;
	}

	/**
	 * Takes note that a heartbeat succeeded: what it read tells whether data was lost.
	 */
	void passed() {
		this.needed = false;
	}

	/**
	 * Returns whether a decision would wait for a check.
	 */
	boolean pending() {
		return this.needed && this.check != null;
	}

	/**
	 * Checks, or waits for the check under way, when one is needed.
	 * @return {@code true} when the primary was checked (or needs no check),
	 * {@code false} when the check failed
	 */
	boolean passes() {
		Runnable check = this.check;
		if (!this.needed || check == null) {
			return true;
		}
		CompletableFuture<Boolean> attempt;
		boolean mine = false;
		synchronized (this.lock) {
			if (!this.needed) {
				return true;
			}
			attempt = this.attempt;
			long now = this.nanoTime.getAsLong();
			boolean failedLately = attempt != null && attempt.isDone() && !attempt.join()
					&& now - this.endedNanos < TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS);
			if (attempt == null || (attempt.isDone() && !failedLately)) {
				attempt = new CompletableFuture<>();
				this.attempt = attempt;
				mine = true;
			}
		}
		if (!mine) {
			return attempt.join();
		}
		try {
			check.run();
		}
		catch (RuntimeException ex) {
			// A heartbeat that fails says so through the failover store; not passed.
		}
		boolean passed = !this.needed;
		synchronized (this.lock) {
			this.endedNanos = this.nanoTime.getAsLong();
		}
		if (!passed) {
			this.failed.run();
		}
		attempt.complete(passed);
		return passed;
	}

}
