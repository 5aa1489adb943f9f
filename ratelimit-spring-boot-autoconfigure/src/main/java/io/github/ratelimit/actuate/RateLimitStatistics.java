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
		counts(result.bucket().name()).add(result.outcome());
	}

	@Override
	public void onError(Bucket bucket, RuntimeException failure, long storeNanos) {
		counts(bucket.name()).add(Outcome.ERROR);
	}

	@Override
	public void onSettled(RateLimitResult reserved, long actual) {
		counts(reserved.bucket().name()).settled(reserved.request().cost(), actual);
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

		void add(Outcome outcome) {
			this.byOutcome[outcome.ordinal()].increment();
		}

		void settled(long estimate, long actual) {
			this.settlements.increment();
			this.reserved.add(estimate);
			this.used.add(actual);
			if (actual > estimate) {
				this.excess.add(actual - estimate);
			}
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
