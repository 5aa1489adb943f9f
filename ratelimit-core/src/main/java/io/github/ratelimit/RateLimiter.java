package io.github.ratelimit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.store.RateLimitStore;

/**
 * The direct API: one bucket's limits on a store, asked per key.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder(store)
 *     .bucket("partner")
 *     .limit(LimitSpec.of(20, "1s", Algorithm.GCRA))
 *     .build();
 *
 * if (limiter.tryAcquire(userId).allowed()) { ... }
 * limiter.acquire("", Duration.ofSeconds(2));   // waits for a permit, up to 2s
 * }</pre>
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimiter {

	private final RateLimitStore store;

	private final String bucket;

	private final List<LimitSpec> limits;

	private final TimeSource timeSource;

	private final Sleeper sleeper;

	private RateLimiter(Builder builder) {
		this.store = builder.store;
		this.bucket = builder.bucket;
		this.limits = List.copyOf(builder.limits);
		this.timeSource = builder.timeSource;
		this.sleeper = builder.sleeper;
	}

	/**
	 * Starts a builder for a limiter on {@code store}.
	 * @param store the store holding the state
	 * @return a new builder
	 */
	public static Builder builder(RateLimitStore store) {
		return new Builder(store);
	}

	/**
	 * Returns the bucket name.
	 * @return the bucket
	 */
	public String bucket() {
		return this.bucket;
	}

	/**
	 * Returns the limits, in the order they are checked.
	 * @return the limits
	 */
	public List<LimitSpec> limits() {
		return this.limits;
	}

	/**
	 * Takes one permit for {@code key} if every limit allows it; never waits.
	 * @param key the key, e.g. a user id; {@code ""} for one shared limit
	 * @return the decision; check {@link Decision#allowed()}
	 */
	public Decision tryAcquire(String key) {
		return tryAcquire(key, 1);
	}

	/**
	 * Takes {@code cost} permits for {@code key} if every limit allows them; never waits.
	 * @param key the key
	 * @param cost the permits, at least 1
	 * @return the decision; check {@link Decision#allowed()}
	 */
	public Decision tryAcquire(String key, long cost) {
		return this.store.decide(this.bucket, key, this.limits, cost);
	}

	/**
	 * Takes one permit for {@code key}, waiting up to {@code maxWait} for it.
	 * @param key the key
	 * @param maxWait the longest wait
	 * @return the allowing decision, after any wait it required
	 * @throws RateLimitExceededException when no permit can be had within {@code maxWait}
	 * @throws InterruptedException when interrupted while waiting
	 */
	public Decision acquire(String key, Duration maxWait) throws InterruptedException {
		return acquire(key, 1, maxWait);
	}

	/**
	 * Takes {@code cost} permits for {@code key}, waiting up to {@code maxWait} for them.
	 * A wait that is known up front to end past {@code maxWait} is not started: the call
	 * fails at once. Leaky bucket delays count against {@code maxWait} too.
	 * @param key the key
	 * @param cost the permits, at least 1
	 * @param maxWait the longest wait
	 * @return the allowing decision, after any wait it required
	 * @throws RateLimitExceededException when no permit can be had within {@code maxWait}
	 * @throws InterruptedException when interrupted while waiting
	 */
	public Decision acquire(String key, long cost, Duration maxWait) throws InterruptedException {
		long budget = toMicros(Objects.requireNonNull(maxWait, "'maxWait' must not be null"));
		long deadline = saturatedAdd(this.timeSource.nowMicros(), budget);
		while (true) {
			long left = Math.max(0, deadline - this.timeSource.nowMicros());
			Decision decision = this.store.decide(this.bucket, key, this.limits, cost, left);
			if (decision.allowed()) {
				if (decision.delayMicros() > 0) {
					this.sleeper.sleepMicros(decision.delayMicros());
				}
				return decision;
			}
			if (!decision.retryable() || decision.retryAfterMicros() > left || queueOutlasts(decision, left)) {
				throw new RateLimitExceededException(this.bucket, decision);
			}
			this.sleeper.sleepMicros(Math.max(1, decision.retryAfterMicros()));
		}
	}

	/**
	 * Gives permits back to every limit that supports refunds.
	 * @param key the key
	 * @param cost the permits, at least 1
	 */
	public void refund(String key, long cost) {
		this.store.refund(this.bucket, key, this.limits, cost);
	}

	/**
	 * Reports the state of {@code key} without consuming.
	 * @param key the key
	 * @return the state as a decision
	 */
	public Decision peek(String key) {
		return this.store.peek(this.bucket, key, this.limits);
	}

	/**
	 * Forgets the state of {@code key}.
	 * @param key the key
	 */
	public void reset(String key) {
		this.store.reset(this.bucket, key, this.limits);
	}

	/**
	 * A leaky bucket slot comes no sooner than its queue drains, however long the caller
	 * waits first: when that is past the deadline, waiting cannot help.
	 */
	private static boolean queueOutlasts(Decision decision, long left) {
		for (Decision limit : decision.limits()) {
			LimitSpec spec = limit.spec();
			if (!limit.allowed() && spec != null && spec.algorithm() == Algorithm.LEAKY_BUCKET
					&& limit.resetAfterMicros() > left) {
				return true;
			}
		}
		return false;
	}

	private static long toMicros(Duration duration) {
		if (duration.isNegative()) {
			throw new IllegalArgumentException("maxWait must not be negative but was " + duration);
		}
		try {
			return TimeUnit.NANOSECONDS.toMicros(duration.toNanos());
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

	private static long saturatedAdd(long a, long b) {
		long sum = a + b;
		return (((a ^ sum) & (b ^ sum)) < 0) ? Long.MAX_VALUE : sum;
	}

	/**
	 * How {@link #acquire} waits; replaced in tests to advance a manual clock instead.
	 */
	@FunctionalInterface
	public interface Sleeper {

		/**
		 * Waits.
		 * @param micros how long
		 * @throws InterruptedException when interrupted
		 */
		void sleepMicros(long micros) throws InterruptedException;

		/**
		 * Returns a sleeper that blocks the thread.
		 * @return the thread sleeper
		 */
		static Sleeper threadSleep() {
			return (micros) -> TimeUnit.MICROSECONDS.sleep(micros);
		}

	}

	/**
	 * Builds a {@link RateLimiter}.
	 */
	public static final class Builder {

		private final RateLimitStore store;

		private String bucket = "default";

		private final List<LimitSpec> limits = new ArrayList<>();

		private TimeSource timeSource = TimeSource.system();

		private Sleeper sleeper = Sleeper.threadSleep();

		private Builder(RateLimitStore store) {
			this.store = Objects.requireNonNull(store, "'store' must not be null");
		}

		/**
		 * Sets the bucket name; {@code default} otherwise.
		 * @param bucket the name
		 * @return this builder
		 */
		public Builder bucket(String bucket) {
			if (bucket == null || bucket.isEmpty()) {
				throw new IllegalArgumentException("bucket must not be null or empty");
			}
			this.bucket = bucket;
			return this;
		}

		/**
		 * Adds a limit; every limit added must allow a request.
		 * @param spec the limit
		 * @return this builder
		 */
		public Builder limit(LimitSpec spec) {
			this.limits.add(Objects.requireNonNull(spec, "'spec' must not be null"));
			return this;
		}

		/**
		 * Sets the clock used to measure {@code maxWait}; the system clock otherwise.
		 * @param timeSource the clock
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "'timeSource' must not be null");
			return this;
		}

		/**
		 * Sets how {@code acquire} waits; {@link Sleeper#threadSleep()} otherwise.
		 * @param sleeper the sleeper
		 * @return this builder
		 */
		public Builder sleeper(Sleeper sleeper) {
			this.sleeper = Objects.requireNonNull(sleeper, "'sleeper' must not be null");
			return this;
		}

		/**
		 * Builds the limiter.
		 * @return the limiter
		 * @throws IllegalArgumentException when no limit was added
		 */
		public RateLimiter build() {
			if (this.limits.isEmpty()) {
				throw new IllegalArgumentException(
						"a RateLimiter needs at least one limit (bucket '" + this.bucket + "')");
			}
			return new RateLimiter(this);
		}

	}

}
