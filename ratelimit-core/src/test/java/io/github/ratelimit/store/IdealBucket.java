package io.github.ratelimit.store;

import java.math.BigInteger;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * The ideal continuous bucket of token bucket, GCRA and leaky bucket, in exact integers,
 * which the contract suite holds the stores to: {@code L / W} permits come back per unit
 * of time, exactly, up to a capacity of {@code B} permits ({@code B·W/L} of time), and
 * the store's clock samples it at whole microseconds. Time is counted here in {@code 1/L}
 * µs, so a permit is {@code W} (in µs) of them, the capacity {@code B·W}, and no number
 * is ever rounded. The state is the time the bucket is full again.
 */
final class IdealBucket {

	private final LimitSpec spec;

	private final BigInteger limit;

	private final BigInteger window;

	private final BigInteger capacity;

	/** When the bucket is full again, in 1/L µs; {@code null} while fresh. */
	private BigInteger fullAt;

	IdealBucket(LimitSpec spec) {
		if (!spec.algorithm().usesBurst()) {
			throw new IllegalArgumentException(spec + " is not a bucket");
		}
		this.spec = spec;
		this.limit = BigInteger.valueOf(spec.limit());
		this.window = BigInteger.valueOf(spec.windowMicros());
		this.capacity = BigInteger.valueOf(spec.burst()).multiply(this.window);
	}

	/**
	 * What a decision at {@code now} on a request of {@code cost} permits must answer,
	 * and takes them when it is allowed.
	 */
	Decision decide(long now, long cost, long maxDelayMicros) {
		boolean shaping = this.spec.algorithm() == Algorithm.LEAKY_BUCKET;
		BigInteger backlog = backlog(now);
		BigInteger step = BigInteger.valueOf(cost).multiply(this.window);
		long available = this.capacity.subtract(backlog).divide(this.window).longValueExact();
		long resetNow = micros(backlog);
		boolean delayAccepted = !shaping || resetNow <= maxDelayMicros;
		if (cost <= available && delayAccepted) {
			this.fullAt = at(now).add(backlog).add(step);
			return Decision.allowed(this.spec, available - cost, micros(backlog.add(step)), shaping ? resetNow : 0);
		}
		long retryAfter = Decision.NEVER;
		if (cost <= this.spec.burst()) {
			retryAfter = Math.max(0, micros(backlog.add(step).subtract(this.capacity)));
			if (shaping) {
				retryAfter = Math.max(retryAfter, resetNow - maxDelayMicros);
			}
		}
		return Decision.rejected(this.spec, available, resetNow, retryAfter);
	}

	/** What a peek at {@code now} must answer. */
	Decision peek(long now) {
		BigInteger before = this.fullAt;
		Decision probe = decide(now, 1, Long.MAX_VALUE);
		this.fullAt = before;
		if (!probe.allowed()) {
			return probe;
		}
		BigInteger backlog = backlog(now);
		long available = this.capacity.subtract(backlog).divide(this.window).longValueExact();
		return Decision.allowed(this.spec, available, micros(backlog), 0);
	}

	/** Gives {@code cost} permits back at {@code now}, never above the capacity. */
	void refund(long now, long cost) {
		if (this.spec.algorithm() == Algorithm.LEAKY_BUCKET) {
			return;
		}
		BigInteger backlog = backlog(now);
		BigInteger after = backlog.subtract(BigInteger.valueOf(cost).multiply(this.window)).max(BigInteger.ZERO);
		this.fullAt = at(now).add(after);
	}

	/** The time the bucket needs to be full again, seen at {@code now}. */
	private BigInteger backlog(long now) {
		return (this.fullAt != null) ? this.fullAt.subtract(at(now)).max(BigInteger.ZERO) : BigInteger.ZERO;
	}

	private BigInteger at(long micros) {
		return BigInteger.valueOf(micros).multiply(this.limit);
	}

	/** A time in 1/L µs as whole microseconds, rounded up (a wait that comes true). */
	private long micros(BigInteger time) {
		BigInteger[] division = time.divideAndRemainder(this.limit);
		BigInteger whole = (division[1].signum() > 0) ? division[0].add(BigInteger.ONE) : division[0];
		return whole.longValueExact();
	}

	/**
	 * Returns the permits a bucket has right after its spec changed from {@code before}
	 * to {@code after}, {@code elapsed} µs after it took {@code used} permits, fresh,
	 * under {@code before}. It keeps the time it needs to refill, up to the new capacity;
	 * counted in {@code 1/L} µs, that time is rounded up to a whole microsecond when the
	 * limit changes.
	 * @param before the spec before
	 * @param after the spec after
	 * @param used the permits taken under {@code before}
	 * @param elapsed the time from then to the change, µs
	 * @return the permits available under {@code after}
	 */
	static long remainingAfterChange(LimitSpec before, LimitSpec after, long used, long elapsed) {
		BigInteger limitBefore = BigInteger.valueOf(before.limit());
		BigInteger backlog = BigInteger.valueOf(used)
			.multiply(BigInteger.valueOf(before.windowMicros()))
			.subtract(BigInteger.valueOf(elapsed).multiply(limitBefore))
			.max(BigInteger.ZERO);
		if (before.limit() != after.limit()) {
			BigInteger[] micros = backlog.divideAndRemainder(limitBefore);
			backlog = micros[0].add((micros[1].signum() > 0) ? BigInteger.ONE : BigInteger.ZERO)
				.multiply(BigInteger.valueOf(after.limit()));
		}
		BigInteger window = BigInteger.valueOf(after.windowMicros());
		BigInteger capacity = BigInteger.valueOf(after.burst()).multiply(window);
		return capacity.subtract(backlog.min(capacity)).divide(window).longValueExact();
	}

	/**
	 * Returns {@code ceil(permits · W / L)} in microseconds: how long {@code permits}
	 * take to come back.
	 * @param spec the limit
	 * @param permits the permits
	 * @return the time in whole microseconds, rounded up
	 */
	static long refillMicros(LimitSpec spec, long permits) {
		BigInteger[] division = BigInteger.valueOf(permits)
			.multiply(BigInteger.valueOf(spec.windowMicros()))
			.divideAndRemainder(BigInteger.valueOf(spec.limit()));
		return division[0].add((division[1].signum() > 0) ? BigInteger.ONE : BigInteger.ZERO).longValueExact();
	}

}
