package io.github.ratelimit.actuate;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.RateLimitObserver;
import io.github.ratelimit.acquire.RateLimitResult;

/**
 * Counts outcomes per bucket since startup, for the actuator endpoint: one count per
 * request, by its final outcome, and the permits of the reservations settled. Bounded by
 * the number of buckets; keys are never recorded.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitStatistics implements RateLimitObserver {

	private final Map<String, Counts> counts = new ConcurrentHashMap<>();

	@Override
	public void onDecision(RateLimitResult result) {
		Counts counts = counts(result.bucket().name());
		counts.add(result.outcome());
		if (result.decision().penaltyStarted()) {
			counts.penalties.increment();
		}
	}

	@Override
	public void onError(Bucket bucket, RuntimeException failure, long storeNanos) {
		counts(bucket.name()).add(Outcome.ERROR);
	}

	@Override
	public void onSettled(RateLimitResult reserved, long actual, long owed) {
		counts(reserved.bucket().name()).settled(reserved.request().cost(), actual, owed);
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
	 * The outcomes of one bucket.
	 */
	public static final class Counts {

		static final Counts NONE = new Counts();

		private final LongAdder[] byOutcome = new LongAdder[Outcome.values().length];

		Counts() {
			for (int i = 0; i < this.byOutcome.length; i++) {
				this.byOutcome[i] = new LongAdder();
			}
		}

		private final LongAdder settlements = new LongAdder();

		private final LongAdder reserved = new LongAdder();

		private final LongAdder used = new LongAdder();

		private final LongAdder excess = new LongAdder();

		private final LongAdder owed = new LongAdder();

		private final LongAdder penalties = new LongAdder();

		void add(Outcome outcome) {
			this.byOutcome[outcome.ordinal()].increment();
		}

		void settled(long estimate, long actual, long owed) {
			this.settlements.increment();
			this.reserved.add(estimate);
			this.used.add(actual);
			if (actual > estimate) {
				this.excess.add(actual - estimate);
			}
			this.owed.add(owed);
		}

		/**
		 * Returns the permits of the excess that keys went into debt for: those a limit
		 * did not have left.
		 * @return the sum since startup
		 */
		public long owed() {
			return this.owed.sum();
		}

		/**
		 * Returns how many rejections blocked their key for a limit's penalty.
		 * @return the count since startup
		 */
		public long penalties() {
			return this.penalties.sum();
		}

		/**
		 * Returns how many reservations were settled.
		 * @return the count since startup
		 */
		public long settlements() {
			return this.settlements.sum();
		}

		/**
		 * Returns the permits the settled reservations took up front.
		 * @return the sum of their estimates since startup
		 */
		public long reserved() {
			return this.reserved.sum();
		}

		/**
		 * Returns the permits the settled reservations really used.
		 * @return the sum since startup
		 */
		public long used() {
			return this.used.sum();
		}

		/**
		 * Returns the permits used beyond what was reserved: taken even past the limit,
		 * into debt when the limit had less left.
		 * @return the sum since startup
		 */
		public long excess() {
			return this.excess.sum();
		}

		/**
		 * Returns how many requests had an outcome.
		 * @param outcome the outcome
		 * @return the count since startup
		 */
		public long count(Outcome outcome) {
			return this.byOutcome[outcome.ordinal()].sum();
		}

	}

}
