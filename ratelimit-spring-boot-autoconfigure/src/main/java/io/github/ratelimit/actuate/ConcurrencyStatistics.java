package io.github.ratelimit.actuate;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyObserver;

/**
 * Counts what became of the permits of each concurrency bucket since startup, for the
 * actuator endpoint. Bounded by the number of buckets; keys are never recorded.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ConcurrencyStatistics implements ConcurrencyObserver {

	private final Map<String, Counts> counts = new ConcurrentHashMap<>();

	@Override
	public void onAcquire(String bucket, ConcurrencyDecision decision, boolean waited) {
		Counts counts = counts(bucket);
		(decision.acquired() ? (waited ? counts.waited : counts.acquired) : counts.rejected).increment();
		counts.expired.add(decision.expiredLeases());
	}

	@Override
	public void onRelease(String bucket, boolean held) {
		(held ? counts(bucket).released : counts(bucket).releasedLate).increment();
	}

	@Override
	public void onLeaseLost(String bucket) {
		counts(bucket).leasesLost.increment();
	}

	@Override
	public void onStoreFailure(String bucket) {
		counts(bucket).storeFailures.increment();
	}

	/**
	 * Returns the counts of one bucket.
	 * @param bucket the bucket name
	 * @return the counts, zero for a bucket never used
	 */
	public Counts get(String bucket) {
		return this.counts.getOrDefault(bucket, Counts.NONE);
	}

	private Counts counts(String bucket) {
		Counts counts = this.counts.get(bucket);
		return (counts != null) ? counts : this.counts.computeIfAbsent(bucket, (name) -> new Counts());
	}

	/**
	 * What became of one bucket's permits.
	 */
	public static final class Counts {

		static final Counts NONE = new Counts();

		private final LongAdder acquired = new LongAdder();

		private final LongAdder waited = new LongAdder();

		private final LongAdder rejected = new LongAdder();

		private final LongAdder released = new LongAdder();

		private final LongAdder releasedLate = new LongAdder();

		private final LongAdder expired = new LongAdder();

		private final LongAdder leasesLost = new LongAdder();

		private final LongAdder storeFailures = new LongAdder();

		/**
		 * Returns the permits taken at once.
		 * @return the count since startup
		 */
		public long acquired() {
			return this.acquired.sum();
		}

		/**
		 * Returns the permits taken after waiting for one.
		 * @return the count since startup
		 */
		public long waited() {
			return this.waited.sum();
		}

		/**
		 * Returns the requests rejected (after any wait).
		 * @return the count since startup
		 */
		public long rejected() {
			return this.rejected.sum();
		}

		/**
		 * Returns the permits given back while still held.
		 * @return the count since startup
		 */
		public long released() {
			return this.released.sum();
		}

		/**
		 * Returns the permits given back after their lease had ended (or an operator
		 * released the key): their calls may have overlapped another's.
		 * @return the count since startup
		 */
		public long releasedLate() {
			return this.releasedLate.sum();
		}

		/**
		 * Returns the leases this instance found expired and took back: their holders, on
		 * any instance, neither released nor renewed them.
		 * @return the count since startup
		 */
		public long expired() {
			return this.expired.sum();
		}

		/**
		 * Returns the leases of this instance's calls that a renewal found gone.
		 * @return the count since startup
		 */
		public long leasesLost() {
			return this.leasesLost.sum();
		}

		/**
		 * Returns the requests the failure mode decided, the store not answering.
		 * @return the count since startup
		 */
		public long storeFailures() {
			return this.storeFailures.sum();
		}

	}

}
