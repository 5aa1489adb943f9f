package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#TOKEN_BUCKET}, {@link Algorithm#GCRA} and
 * {@link Algorithm#LEAKY_BUCKET}: one meter kept as one number, the time in nanoseconds
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
 * new capacity. The Redis script keeps the same number.
 */
final class BucketMeter extends Meter {

	private final Algorithm algorithm;

	/**
	 * When the bucket is full again, in nanoseconds; {@link Long#MIN_VALUE} when fresh.
	 */
	private long fullAt = Long.MIN_VALUE;

	BucketMeter(LimitSpec spec) {
		super(spec);
		this.algorithm = spec.algorithm();
	}

	@Override
	public Algorithm algorithm() {
		return this.algorithm;
	}

	@Override
	public boolean isDryRunReadOnly() {
		return true;
	}

	@Override
	public Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit) {
		boolean shaping = this.algorithm == Algorithm.LEAKY_BUCKET;
		long interval = spec.emissionIntervalNanos();
		long capacity = spec.burst() * interval;
		long nowNanos = now * 1000L;
		long backlog = backlog(nowNanos, capacity);
		long available = (capacity - backlog) / interval;
		long resetNow = nanosToMicrosCeil(backlog);
		boolean delayAccepted = !shaping || resetNow <= maxDelayMicros;
		if (cost <= spec.burst() && cost * interval <= capacity - backlog && delayAccepted) {
			long after = backlog + cost * interval;
			if (commit) {
				this.fullAt = nowNanos + after;
			}
			return Decision.allowed(spec, available - cost, nanosToMicrosCeil(after), shaping ? resetNow : 0);
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
		return Decision.rejected(spec, available, resetNow, retryAfter);
	}

	@Override
	public void refund(LimitSpec spec, long now, long cost) {
		if (this.algorithm == Algorithm.LEAKY_BUCKET) {
			return;
		}
		long interval = spec.emissionIntervalNanos();
		long nowNanos = now * 1000L;
		long backlog = backlog(nowNanos, spec.burst() * interval);
		if (backlog > 0) {
			this.fullAt = nowNanos + ((cost >= spec.burst()) ? 0 : Math.max(0, backlog - cost * interval));
		}
	}

	@Override
	long available(LimitSpec spec, long now) {
		long interval = spec.emissionIntervalNanos();
		long capacity = spec.burst() * interval;
		return (capacity - backlog(now * 1000L, capacity)) / interval;
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		return nanosToMicrosCeil(backlog(now * 1000L, spec.burst() * spec.emissionIntervalNanos()));
	}

	@Override
	public long expiresAtMicros(LimitSpec spec) {
		return (this.fullAt == Long.MIN_VALUE) ? Long.MIN_VALUE : nanosToMicrosCeil(this.fullAt);
	}

	/**
	 * The backlog at {@code nowNanos}, at most {@code capacity}. A backlog above it was
	 * taken under a larger capacity (the spec changed): it is cut to the capacity and
	 * kept so, or a retry-after computed from the cut backlog would not come true. Under
	 * an unchanged spec the backlog never exceeds the capacity, so a dry run never
	 * writes.
	 */
	private long backlog(long nowNanos, long capacity) {
		if (this.fullAt == Long.MIN_VALUE) {
			return 0;
		}
		long backlog = this.fullAt - nowNanos;
		if (backlog > capacity) {
			this.fullAt = nowNanos + capacity;
			return capacity;
		}
		return Math.max(0, backlog);
	}

}
