package io.github.ratelimit.concurrency;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;

/**
 * A request's permit of a {@link ConcurrencyLimit}, or the rejection of that request. An
 * acquired permit is held until {@link #release()} (or {@link #close()}), renewed
 * meanwhile by the limiter's {@link LeaseRenewer}; it is released once, whatever calls it
 * afterwards.
 * <p>
 * A holder that froze longer than its lease (a stopped JVM, a long GC pause, a lost
 * connection) is told its lease is gone: {@link #leaseLost()} turns true at the next
 * renewal, {@link #release()} returns {@code false}, and {@link #leaseExpired()} says so
 * from this JVM's own monotonic clock before any store call. Another call may hold the
 * permit by then; a call that must never overlap checks {@link #leaseExpired()} before
 * each step it protects.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ConcurrencyPermit implements AutoCloseable {

	private final String bucket;

	private final String key;

	private final String holder;

	private final ConcurrencyDecision decision;

	private final AtomicBoolean released;

	private final long leaseNanos;

	private volatile long leaseEndNanos;

	private volatile boolean lost;

	private @Nullable BooleanSupplier releaser;

	private @Nullable Runnable onRelease;

	ConcurrencyPermit(String bucket, String key, String holder, ConcurrencyDecision decision, long leaseNanos,
			long askedNanos) {
		this.bucket = bucket;
		this.key = key;
		this.holder = holder;
		this.decision = decision;
		this.released = new AtomicBoolean(!decision.acquired());
		this.leaseNanos = leaseNanos;
		// From when the request was sent: the store's lease started no earlier.
		this.leaseEndNanos = askedNanos + leaseNanos;
	}

	void onRelease(BooleanSupplier releaser, Runnable stopRenewing) {
		this.releaser = releaser;
		this.onRelease = stopRenewing;
	}

	/**
	 * Returns whether the permit was acquired.
	 * @return {@code false} for a rejection, which holds nothing
	 */
	public boolean acquired() {
		return this.decision.acquired();
	}

	/**
	 * Returns the store's decision.
	 * @return the decision
	 */
	public ConcurrencyDecision decision() {
		return this.decision;
	}

	/**
	 * Returns the bucket.
	 * @return the bucket name
	 */
	public String bucket() {
		return this.bucket;
	}

	/**
	 * Returns the key.
	 * @return the key within the bucket
	 */
	public String key() {
		return this.key;
	}

	/**
	 * Returns who holds the permit in the store.
	 * @return the holder id
	 */
	public String holder() {
		return this.holder;
	}

	/**
	 * Returns whether a renewal found the lease gone.
	 * @return {@code true} once the store no longer held the permit for this holder
	 */
	public boolean leaseLost() {
		return this.lost;
	}

	/**
	 * Returns whether, by this JVM's monotonic clock, the lease may have expired in the
	 * store: no renewal succeeded within a lease of the last one. It counts time this JVM
	 * was stopped too.
	 * @return {@code true} when the permit may be another call's by now
	 */
	public boolean leaseExpired() {
		return this.lost || System.nanoTime() - this.leaseEndNanos >= 0;
	}

	/**
	 * Returns whether the permit is still to be released.
	 * @return {@code false} once released, and for a rejection
	 */
	public boolean held() {
		return !this.released.get();
	}

	void renewed(long askedNanos) {
		this.leaseEndNanos = askedNanos + this.leaseNanos;
	}

	void lost() {
		this.lost = true;
	}

	/**
	 * Gives the permit back, once: later calls, and calls on a rejection, do nothing.
	 * @return {@code true} when the store still held it; {@code false} when its lease had
	 * expired or an operator released the key (another call may have had it), when it was
	 * released already, or for a rejection
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer: the permit then comes back when its lease ends
	 */
	public boolean release() {
		if (!this.released.compareAndSet(false, true)) {
			return false;
		}
		Runnable stop = this.onRelease;
		if (stop != null) {
			stop.run();
		}
		BooleanSupplier releaser = this.releaser;
		return releaser != null && releaser.getAsBoolean();
	}

	/**
	 * Releases the permit, as {@link #release()}.
	 */
	@Override
	public void close() {
		release();
	}

	@Override
	public String toString() {
		return "ConcurrencyPermit{bucket=" + this.bucket + ", holder=" + this.holder + ", " + this.decision
				+ (this.lost ? ", lease lost" : "") + "}";
	}

}
