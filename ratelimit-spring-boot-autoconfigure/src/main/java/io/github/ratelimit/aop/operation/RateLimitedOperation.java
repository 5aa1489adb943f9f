package io.github.ratelimit.aop.operation;

import java.time.Duration;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

import io.github.ratelimit.acquire.WaitPolicy;
import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.bucket.BucketDefinition;

/**
 * One {@link RateLimited @RateLimited} of one method, parsed and validated at startup:
 * the bucket with its resolved limits, the expressions to evaluate per call, how long a
 * call may wait, and what to do when the limit is reached. Immutable.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitedOperation {

	private final BucketDefinition bucket;

	private final @Nullable Expression key;

	private final long fixedCost;

	private final @Nullable Expression cost;

	private final @Nullable Expression limit;

	private final @Nullable Expression skipWhen;

	private final @Nullable Expression refundWhen;

	private final @Nullable Expression settle;

	private final @Nullable Expression settleOnError;

	private final @Nullable Expression zone;

	private final WaitPolicy waitPolicy;

	private final @Nullable FallbackMethod fallback;

	private final String methodDescription;

	RateLimitedOperation(Builder builder) {
		this.bucket = builder.bucket;
		this.key = builder.key;
		this.fixedCost = builder.fixedCost;
		this.cost = builder.cost;
		this.limit = builder.limit;
		this.skipWhen = builder.skipWhen;
		this.refundWhen = builder.refundWhen;
		this.settle = builder.settle;
		this.settleOnError = builder.settleOnError;
		this.zone = builder.zone;
		this.waitPolicy = builder.waitPolicy;
		this.fallback = builder.fallback;
		this.methodDescription = builder.methodDescription;
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
		return this.waitPolicy.waitsForPermits() ? OnLimit.WAIT : OnLimit.REJECT;
	}

	/**
	 * Returns the longest wait ({@code maxWait}), if set.
	 * @return the longest wait
	 */
	public Optional<Duration> maxWait() {
		return this.waitPolicy.maxWait();
	}

	/**
	 * Returns how long a call may wait ({@code onLimit} and {@code maxWait}).
	 * @return the wait policy
	 */
	public WaitPolicy waitPolicy() {
		return this.waitPolicy;
	}

	/**
	 * Returns the key expression.
	 * @return the expression, or {@code null} for one limit shared by every caller
	 */
	public @Nullable Expression key() {
		return this.key;
	}

	/**
	 * Returns the cost of a call when it is a literal.
	 * @return the cost, used when {@link #cost()} is {@code null}
	 */
	public long fixedCost() {
		return this.fixedCost;
	}

	/**
	 * Returns the cost expression.
	 * @return the expression, or {@code null} for {@link #fixedCost()}
	 */
	public @Nullable Expression cost() {
		return this.cost;
	}

	/**
	 * Returns the {@code limitExpression}.
	 * @return the expression, or {@code null} for the bucket's limits
	 */
	public @Nullable Expression limit() {
		return this.limit;
	}

	/**
	 * Returns the {@code skipWhen} expression.
	 * @return the expression, or {@code null}
	 */
	public @Nullable Expression skipWhen() {
		return this.skipWhen;
	}

	/**
	 * Returns the {@code refundWhen} expression.
	 * @return the expression, or {@code null}
	 */
	public @Nullable Expression refundWhen() {
		return this.refundWhen;
	}

	/**
	 * Returns the {@code settle} expression: what the call really used.
	 * @return the expression, or {@code null} when the cost is fixed up front
	 */
	public @Nullable Expression settle() {
		return this.settle;
	}

	/**
	 * Returns the {@code zoneExpression}: the time zone of this call's calendar window.
	 * @return the expression, or {@code null} for the bucket's zone
	 */
	public @Nullable Expression zone() {
		return this.zone;
	}

	/**
	 * Returns the {@code settleOnError} expression: what a failed call used.
	 * @return the expression, or {@code null} to keep the estimate
	 */
	public @Nullable Expression settleOnError() {
		return this.settleOnError;
	}

	/**
	 * Returns the fallback method.
	 * @return the fallback, or {@code null} to throw the rejection
	 */
	public @Nullable FallbackMethod fallback() {
		return this.fallback;
	}

	/**
	 * Describes an attribute for messages.
	 * @param attribute the attribute name
	 * @return e.g. {@code @RateLimited(key) on LoginService.login(String, String)}
	 */
	public String where(String attribute) {
		return where(attribute, this.methodDescription);
	}

	static String where(String attribute, String methodDescription) {
		return "@RateLimited(" + attribute + ") on " + methodDescription;
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

		private @Nullable Expression settle;

		private @Nullable Expression settleOnError;

		private @Nullable Expression zone;

		private WaitPolicy waitPolicy = WaitPolicy.REJECT;

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

		Builder settle(@Nullable Expression settle, @Nullable Expression settleOnError) {
			this.settle = settle;
			this.settleOnError = settleOnError;
			return this;
		}

		Builder zone(@Nullable Expression zone) {
			this.zone = zone;
			return this;
		}

		Builder waitPolicy(WaitPolicy waitPolicy) {
			this.waitPolicy = waitPolicy;
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
