package io.github.ratelimit.aop;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.spring.BucketDefinition;
import io.github.ratelimit.store.RateLimitStore;

/**
 * One {@link RateLimited @RateLimited} of one method, parsed and validated at startup:
 * the bucket with its resolved limits, the expressions to evaluate per call, and what to
 * do when the limit is reached. Immutable.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitedOperation {

	/** A deadline that never passes: no {@code maxWait}. */
	static final long NO_DEADLINE = Long.MAX_VALUE;

	/**
	 * Shortest wait before deciding again, so that a store answering a zero retry-after
	 * cannot make a waiting caller spin on it.
	 */
	static final long MIN_RETRY_WAIT_MICROS = 1000;

	private final BucketDefinition bucket;

	private final @Nullable Expression key;

	private final long fixedCost;

	private final @Nullable Expression cost;

	private final @Nullable Expression limit;

	private final @Nullable Expression skipWhen;

	private final @Nullable Expression refundWhen;

	private final OnLimit onLimit;

	private final long maxWaitMicros;

	private final @Nullable FallbackMethod fallback;

	private final String methodDescription;

	private final boolean refundable;

	RateLimitedOperation(Builder builder) {
		this.bucket = builder.bucket;
		this.key = builder.key;
		this.fixedCost = builder.fixedCost;
		this.cost = builder.cost;
		this.limit = builder.limit;
		this.skipWhen = builder.skipWhen;
		this.refundWhen = builder.refundWhen;
		this.onLimit = builder.onLimit;
		this.maxWaitMicros = builder.maxWaitMicros;
		this.fallback = builder.fallback;
		this.methodDescription = builder.methodDescription;
		// Leaky bucket slots cannot be given back; skip the store call when no limit
		// of the bucket can take a refund.
		this.refundable = builder.bucket.limits()
			.stream()
			.map(LimitSpec::algorithm)
			.anyMatch((algorithm) -> algorithm != Algorithm.LEAKY_BUCKET);
	}

	/**
	 * Returns the bucket, with limits resolved from configuration, the annotation and the
	 * defaults.
	 * @return the bucket
	 */
	public BucketDefinition bucket() {
		return this.bucket;
	}

	/**
	 * Returns what a call does when the limit is reached.
	 * @return the behaviour
	 */
	public OnLimit onLimit() {
		return this.onLimit;
	}

	/**
	 * Returns the longest wait ({@code maxWait}), if set.
	 * @return the longest wait
	 */
	public Optional<Duration> maxWait() {
		return (this.maxWaitMicros < 0) ? Optional.empty()
				: Optional.of(Duration.of(this.maxWaitMicros, ChronoUnit.MICROS));
	}

	@Nullable Expression key() {
		return this.key;
	}

	long fixedCost() {
		return this.fixedCost;
	}

	@Nullable Expression cost() {
		return this.cost;
	}

	@Nullable Expression limit() {
		return this.limit;
	}

	@Nullable Expression skipWhen() {
		return this.skipWhen;
	}

	@Nullable Expression refundWhen() {
		return this.refundWhen;
	}

	@Nullable FallbackMethod fallback() {
		return this.fallback;
	}

	/**
	 * Returns whether the store can give permits of this bucket back.
	 * @return {@code false} when every limit is a leaky bucket
	 */
	boolean refundable() {
		return this.refundable;
	}

	/**
	 * Describes an attribute for messages.
	 * @param attribute the attribute name
	 * @return e.g. {@code @RateLimited(key) on LoginService.login(String, String)}
	 */
	String where(String attribute) {
		return where(attribute, this.methodDescription);
	}

	static String where(String attribute, String methodDescription) {
		return "@RateLimited(" + attribute + ") on " + methodDescription;
	}

	/**
	 * Returns when waiting for this operation must end.
	 * @param nowMicros the time the call started deciding on this operation
	 * @return the deadline, or {@link #NO_DEADLINE} without {@code maxWait}
	 */
	long deadline(long nowMicros) {
		if (this.maxWaitMicros < 0) {
			return NO_DEADLINE;
		}
		long deadline = nowMicros + this.maxWaitMicros;
		return (deadline < nowMicros) ? NO_DEADLINE : deadline;
	}

	/**
	 * Returns the longest leaky bucket delay to accept now: what is left of
	 * {@code maxWait}, so that waiting for a permit and then for a slot never exceeds it.
	 * @param deadline the deadline from {@link #deadline(long)}
	 * @param nowMicros the current time
	 * @return the delay bound for the store
	 */
	long maxDelay(long deadline, long nowMicros) {
		return (deadline == NO_DEADLINE) ? RateLimitStore.NO_MAX_DELAY : Math.max(0, deadline - nowMicros);
	}

	/**
	 * Returns how long to wait before deciding again after a rejection.
	 * @param decision the rejecting decision
	 * @param timeLeftMicros what is left of {@code maxWait}
	 * @return the wait in microseconds, or {@code -1} to reject now: the operation does
	 * not wait, no wait helps, or the wait needed is longer than the time left
	 */
	long retryWait(Decision decision, long timeLeftMicros) {
		if (this.onLimit != OnLimit.WAIT || !decision.retryable() || timeLeftMicros <= 0) {
			return -1;
		}
		long retryAfter = decision.retryAfterMicros();
		if (retryAfter > timeLeftMicros) {
			return -1;
		}
		return Math.max(1, Math.min(Math.max(retryAfter, MIN_RETRY_WAIT_MICROS), timeLeftMicros));
	}

	@Override
	public String toString() {
		return "@RateLimited(bucket = '" + this.bucket.name() + "') on " + this.methodDescription;
	}

	/**
	 * Collects the parsed parts of an operation.
	 */
	static final class Builder {

		private final BucketDefinition bucket;

		private final String methodDescription;

		private @Nullable Expression key;

		private long fixedCost = 1;

		private @Nullable Expression cost;

		private @Nullable Expression limit;

		private @Nullable Expression skipWhen;

		private @Nullable Expression refundWhen;

		private OnLimit onLimit = OnLimit.REJECT;

		private long maxWaitMicros = -1;

		private @Nullable FallbackMethod fallback;

		Builder(BucketDefinition bucket, String methodDescription) {
			this.bucket = bucket;
			this.methodDescription = methodDescription;
		}

		Builder key(@Nullable Expression key) {
			this.key = key;
			return this;
		}

		Builder fixedCost(long fixedCost) {
			this.fixedCost = fixedCost;
			return this;
		}

		Builder cost(@Nullable Expression cost) {
			this.cost = cost;
			return this;
		}

		Builder limit(@Nullable Expression limit) {
			this.limit = limit;
			return this;
		}

		Builder skipWhen(@Nullable Expression skipWhen) {
			this.skipWhen = skipWhen;
			return this;
		}

		Builder refundWhen(@Nullable Expression refundWhen) {
			this.refundWhen = refundWhen;
			return this;
		}

		Builder onLimit(OnLimit onLimit) {
			this.onLimit = onLimit;
			return this;
		}

		Builder maxWaitMicros(long maxWaitMicros) {
			this.maxWaitMicros = maxWaitMicros;
			return this;
		}

		Builder fallback(@Nullable FallbackMethod fallback) {
			this.fallback = fallback;
			return this;
		}

		RateLimitedOperation build() {
			return new RateLimitedOperation(this);
		}

	}

}
