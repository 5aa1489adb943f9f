package io.github.ratelimit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.acquire.Reservation;
import io.github.ratelimit.acquire.WaitPolicy;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The direct API: one bucket's limits, asked per key. It takes its permits through an
 * {@link Acquirer}, like the filter and {@code @RateLimited}: the same waits, shadow mode
 * and observers (in a Spring Boot application, {@code RateLimiters} hands out limiters on
 * the application's acquirer, so their decisions reach the metrics and the endpoint).
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder(store)
 *     .bucket("partner")
 *     .limit(LimitSpec.of(20, "1s", Algorithm.GCRA))
 *     .build();
 *
 * if (limiter.tryAcquire(userId).proceeds()) { ... }
 * limiter.acquire("", Duration.ofSeconds(2));   // waits for a permit, up to 2s
 * }</pre>
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimiter {

	private final Acquirer acquirer;

	private final Supplier<Bucket> bucket;

	private RateLimiter(Acquirer acquirer, Supplier<Bucket> bucket) {
		this.acquirer = Objects.requireNonNull(acquirer, "'acquirer' must not be null");
		this.bucket = Objects.requireNonNull(bucket, "'bucket' must not be null");
	}

	/**
	 * Returns a limiter of {@code bucket} that takes its permits through
	 * {@code acquirer}.
	 * @param acquirer the acquirer (its store, waiter and observers)
	 * @param bucket the bucket
	 * @return the limiter
	 */
	public static RateLimiter of(Acquirer acquirer, Bucket bucket) {
		Objects.requireNonNull(bucket, "'bucket' must not be null");
		return new RateLimiter(acquirer, () -> bucket);
	}

	/**
	 * Returns a limiter that reads its bucket from {@code bucket} on every call, so that
	 * limits changed at runtime (a live change through the actuator endpoint) apply to a
	 * limiter handed out before the change.
	 * @param acquirer the acquirer (its store, waiter and observers)
	 * @param bucket supplies the bucket as it is now; never {@code null}
	 * @return the limiter
	 */
	public static RateLimiter of(Acquirer acquirer, Supplier<Bucket> bucket) {
		return new RateLimiter(acquirer, bucket);
	}

	/**
	 * Starts a builder for a limiter on {@code store}, with an acquirer of its own that
	 * waits on the system clock and has no observers.
	 * @param store the store holding the state
	 * @return a new builder
	 */
	public static Builder builder(RateLimitStore store) {
		return new Builder(Acquirer.builder(store).build());
	}

	/**
	 * Starts a builder for a limiter that takes its permits through {@code acquirer}.
	 * @param acquirer the acquirer (its store, waiter and observers)
	 * @return a new builder
	 */
	public static Builder builder(Acquirer acquirer) {
		return new Builder(acquirer);
	}

	/**
	 * Returns the bucket: its name, limits (in the order they are checked) and mode.
	 * @return the bucket
	 */
	public Bucket bucket() {
		return this.bucket.get();
	}

	/**
	 * Takes one permit for {@code key} if every limit allows it; never waits (a leaky
	 * bucket {@link Decision#delay() delay} is the caller's to wait).
	 * @param key the key, e.g. a user id; {@code ""} for one shared limit
	 * @return the result; {@link RateLimitResult#proceeds()} tells whether to go on
	 */
	public RateLimitResult tryAcquire(String key) {
		return tryAcquire(key, 1);
	}

	/**
	 * Takes {@code cost} permits for {@code key} if every limit allows them; never waits.
	 * @param key the key
	 * @param cost the permits, at least 1
	 * @return the result; {@link RateLimitResult#proceeds()} tells whether to go on
	 */
	public RateLimitResult tryAcquire(String key, long cost) {
		return this.acquirer.tryAcquire(PermitRequest.of(bucket(), key, cost));
	}

	/**
	 * Takes one permit for {@code key}, waiting up to {@code maxWait} for it.
	 * @param key the key
	 * @param maxWait the longest wait
	 * @return the result, after any wait it required
	 * @throws RateLimitExceededException when no permit can be had within {@code maxWait}
	 * @throws InterruptedException when interrupted while waiting for the permit
	 */
	public RateLimitResult acquire(String key, Duration maxWait) throws InterruptedException {
		return acquire(key, 1, maxWait);
	}

	/**
	 * Takes {@code cost} permits for {@code key}, waiting up to {@code maxWait} for them.
	 * A wait that is known up front to end past {@code maxWait} is not started: the call
	 * fails at once. A leaky bucket delay counts against {@code maxWait} too, and is
	 * waited before returning, whatever interrupts come meanwhile (the slot is taken).
	 * @param key the key
	 * @param cost the permits, at least 1
	 * @param maxWait the longest wait
	 * @return the result, after any wait it required
	 * @throws RateLimitExceededException when no permit can be had within {@code maxWait}
	 * @throws InterruptedException when interrupted while waiting for the permit
	 */
	public RateLimitResult acquire(String key, long cost, Duration maxWait) throws InterruptedException {
		Bucket bucket = bucket();
		PermitRequest request = new PermitRequest(bucket, key, bucket.limits(), cost, WaitPolicy.waitUpTo(maxWait));
		Acquisition acquisition = this.acquirer.acquire(List.of(request));
		if (!acquisition.granted()) {
			if (Thread.interrupted()) {
				throw new InterruptedException(
						"Interrupted while waiting for a permit of bucket '" + bucket.name() + "'");
			}
			throw acquisition.exception();
		}
		return acquisition.results().get(0);
	}

	/**
	 * Reserves {@code estimate} permits for {@code key} for a call whose real cost is
	 * known only when it ends; never waits. {@link Reservation#settle} then says what the
	 * call used.
	 * @param key the key
	 * @param estimate the permits to take up front, at least 1
	 * @return the reservation; {@link Reservation#proceeds()} tells whether to go on
	 */
	public Reservation reserve(String key, long estimate) {
		return new Reservation(this.acquirer, tryAcquire(key, estimate));
	}

	/**
	 * Gives permits back to every limit that supports refunds.
	 * @param key the key
	 * @param cost the permits, at least 1
	 */
	public void refund(String key, long cost) {
		this.acquirer.refund(PermitRequest.of(bucket(), key, cost));
	}

	/**
	 * Reports the state of {@code key} without consuming.
	 * @param key the key
	 * @return the state as a decision
	 */
	public Decision peek(String key) {
		Bucket bucket = bucket();
		return this.acquirer.store().peek(bucket.name(), key, bucket.limits());
	}

	/**
	 * Forgets the state of {@code key}.
	 * @param key the key
	 */
	public void reset(String key) {
		Bucket bucket = bucket();
		this.acquirer.store().reset(bucket.name(), key, bucket.limits());
	}

	@Override
	public String toString() {
		return "RateLimiter " + bucket();
	}

	/**
	 * Builds a {@link RateLimiter}.
	 */
	public static final class Builder {

		private final Acquirer acquirer;

		private String bucket = "default";

		private final List<LimitSpec> limits = new ArrayList<>();

		private LimitMode mode = LimitMode.ENFORCE;

		private Builder(Acquirer acquirer) {
			this.acquirer = Objects.requireNonNull(acquirer, "'acquirer' must not be null");
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
		 * Sets whether rejections are enforced; {@link LimitMode#ENFORCE} otherwise.
		 * @param mode the mode
		 * @return this builder
		 */
		public Builder mode(LimitMode mode) {
			this.mode = Objects.requireNonNull(mode, "'mode' must not be null");
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
			return of(this.acquirer, new Bucket(this.bucket, this.limits, this.mode));
		}

	}

}
