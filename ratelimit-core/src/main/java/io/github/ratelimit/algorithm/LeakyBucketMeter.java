package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#LEAKY_BUCKET} as a shaper (nginx {@code limit_req} without
 * {@code nodelay}): a queue drained at one request per emission interval
 * {@code T = W / L}. A request takes the next free slot and is told to wait until it
 * ({@code delay}); it is rejected when {@code B} requests' worth of slots are already
 * queued. State is the time the queue drains, in nanoseconds.
 */
final class LeakyBucketMeter extends Meter {

	/** When the last queued request's slot ends, in nanoseconds; MIN_VALUE when fresh. */
	private long drainedAt = Long.MIN_VALUE;

	@Override
	public Algorithm algorithm() {
		return Algorithm.LEAKY_BUCKET;
	}

	@Override
	public boolean isDryRunReadOnly() {
		return true;
	}

	@Override
	public Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit) {
		long interval = spec.emissionIntervalNanos();
		long queueCapacity = spec.burst() * interval;
		long nowNanos = now * 1000L;
		long queued = queued(nowNanos);
		long delay = nanosToMicrosCeil(queued);
		boolean fits = queued + cost * interval <= queueCapacity;
		if (cost <= spec.burst() && fits && delay <= maxDelayMicros) {
			long newQueued = queued + cost * interval;
			if (commit) {
				this.drainedAt = nowNanos + newQueued;
			}
			return Decision.allowed(spec, (queueCapacity - newQueued) / interval, nanosToMicrosCeil(newQueued), delay);
		}
		long retryAfter;
		if (cost > spec.burst()) {
			retryAfter = Decision.NEVER;
		}
		else {
			long untilFits = nanosToMicrosCeil(queued + cost * interval - queueCapacity);
			long untilDelayAccepted = (maxDelayMicros == Long.MAX_VALUE) ? 0
					: nanosToMicrosCeil(queued - maxDelayMicros * 1000L);
			retryAfter = Math.max(Math.max(untilFits, untilDelayAccepted), 0);
		}
		return Decision.rejected(spec, (queueCapacity - queued) / interval, delay, retryAfter);
	}

	@Override
	public void refund(LimitSpec spec, long now, long cost) {
		// A slot once handed out is already being waited for: nothing to give back.
	}

	@Override
	long available(LimitSpec spec, long now) {
		long interval = spec.emissionIntervalNanos();
		return (spec.burst() * interval - queued(now * 1000L)) / interval;
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		return nanosToMicrosCeil(queued(now * 1000L));
	}

	@Override
	public long expiresAtMicros(LimitSpec spec) {
		return (this.drainedAt == Long.MIN_VALUE) ? Long.MIN_VALUE : nanosToMicrosCeil(this.drainedAt);
	}

	private long queued(long nowNanos) {
		return (this.drainedAt == Long.MIN_VALUE) ? 0 : Math.max(0, this.drainedAt - nowNanos);
	}

}
