package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#TOKEN_BUCKET}, {@link Algorithm#GCRA} and
 * {@link Algorithm#LEAKY_BUCKET}: one function over one number, the time in nanoseconds
 * at which the bucket is full again ({@code fullAt}; GCRA's theoretical arrival time, the
 * time the leaky bucket's queue drains). The backlog {@code fullAt - t} is the credit
 * taken and not yet restored; a request of cost {@code c} adds {@code c * T} to it
 * ({@code T = W / L}, the emission interval) and is allowed while the backlog stays
 * within {@code B * T}. Shaping (leaky bucket) differs only in making the caller wait for
 * its slot (the delay is the backlog), bounding that wait, and in refusing refunds: a
 * slot once handed out is already being waited for.
 * <p>
 * The backlog is read under the current spec and cut to its capacity {@code B * T}, so a
 * change of limit, window or burst keeps the time the bucket needs to refill, up to the
 * new capacity. The Redis script (bucket.lua) keeps the same number.
 */
final class BucketState extends LimitState {

	private static final BucketState FRESH_TOKEN_BUCKET = new BucketState(Algorithm.TOKEN_BUCKET, Long.MIN_VALUE);

	private static final BucketState FRESH_GCRA = new BucketState(Algorithm.GCRA, Long.MIN_VALUE);

	private static final BucketState FRESH_LEAKY_BUCKET = new BucketState(Algorithm.LEAKY_BUCKET, Long.MIN_VALUE);

	private final Algorithm algorithm;

	/**
	 * When the bucket is full again, in nanoseconds; {@link Long#MIN_VALUE} when fresh.
	 */
	private final long fullAt;

	private BucketState(Algorithm algorithm, long fullAt) {
		this.algorithm = algorithm;
		this.fullAt = fullAt;
	}

	static BucketState fresh(Algorithm algorithm) {
		switch (algorithm) {
			case GCRA:
				return FRESH_GCRA;
			case LEAKY_BUCKET:
				return FRESH_LEAKY_BUCKET;
			default:
				return FRESH_TOKEN_BUCKET;
		}
	}

	@Override
	public Transition acquire(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		boolean shaping = this.algorithm == Algorithm.LEAKY_BUCKET;
		long interval = spec.emissionIntervalNanos();
		long capacity = spec.burst() * interval;
		long nowNanos = now * 1000L;
		BucketState kept = cut(nowNanos, capacity);
		long backlog = kept.backlog(nowNanos);
		long available = (capacity - backlog) / interval;
		long resetNow = nanosToMicrosCeil(backlog);
		boolean delayAccepted = !shaping || resetNow <= maxDelayMicros;
		if (cost <= spec.burst() && cost * interval <= capacity - backlog && delayAccepted) {
			long after = backlog + cost * interval;
			Decision allowed = Decision.allowed(spec, available - cost, nanosToMicrosCeil(after),
					shaping ? resetNow : 0);
			return new Transition(allowed, new BucketState(this.algorithm, nowNanos + after), kept);
		}
		long retryAfter = Decision.NEVER;
		if (cost <= spec.burst()) {
			retryAfter = Math.max(0, nanosToMicrosCeil(backlog + cost * interval - capacity));
			if (shaping) {
				// The wait until the delay is short enough, without multiplying
				// maxDelayMicros, which may be as large as a long.
				retryAfter = Math.max(retryAfter, resetNow - maxDelayMicros);
			}
		}
		return Transition.rejected(Decision.rejected(spec, available, resetNow, retryAfter), kept);
	}

	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		if (this.algorithm == Algorithm.LEAKY_BUCKET) {
			return this;
		}
		long interval = spec.emissionIntervalNanos();
		long nowNanos = now * 1000L;
		BucketState kept = cut(nowNanos, spec.burst() * interval);
		long backlog = kept.backlog(nowNanos);
		if (backlog <= 0) {
			return kept;
		}
		long after = (cost >= spec.burst()) ? 0 : Math.max(0, backlog - cost * interval);
		return new BucketState(this.algorithm, nowNanos + after);
	}

	@Override
	long available(LimitSpec spec, long now) {
		long interval = spec.emissionIntervalNanos();
		long capacity = spec.burst() * interval;
		return (capacity - Math.min(capacity, backlog(now * 1000L))) / interval;
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long capacity = spec.burst() * spec.emissionIntervalNanos();
		return nanosToMicrosCeil(Math.min(capacity, backlog(now * 1000L)));
	}

	@Override
	public long expiresAtMicros() {
		return (this.fullAt == Long.MIN_VALUE) ? Long.MIN_VALUE : nanosToMicrosCeil(this.fullAt);
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return spec.algorithm() == this.algorithm;
	}

	/**
	 * Returns this state read at {@code nowNanos} under {@code capacity}: a backlog above
	 * it was taken under a larger capacity (the spec changed) and is cut to the capacity
	 * and kept so, or a retry-after computed from the cut backlog would not come true.
	 * Under an unchanged spec the backlog never exceeds the capacity, and the state is
	 * returned as it is.
	 */
	private BucketState cut(long nowNanos, long capacity) {
		if (this.fullAt != Long.MIN_VALUE && this.fullAt - nowNanos > capacity) {
			return new BucketState(this.algorithm, nowNanos + capacity);
		}
		return this;
	}

	/** The backlog at {@code nowNanos}: credit taken and not yet restored. */
	private long backlog(long nowNanos) {
		return (this.fullAt == Long.MIN_VALUE) ? 0 : Math.max(0, this.fullAt - nowNanos);
	}

}
