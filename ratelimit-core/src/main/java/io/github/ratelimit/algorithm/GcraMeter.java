package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#GCRA}: one theoretical arrival time (TAT) in nanoseconds. A request of
 * cost {@code c} at {@code t} moves it to {@code max(TAT, t) + c * T} and is allowed
 * while that is at most {@code B * T} ahead of {@code t}: the same meter as a token
 * bucket of capacity {@code B}, kept as one number.
 */
final class GcraMeter extends Meter {

	/** Theoretical arrival time in nanoseconds; {@link Long#MIN_VALUE} when fresh. */
	private long tat = Long.MIN_VALUE;

	@Override
	public Algorithm algorithm() {
		return Algorithm.GCRA;
	}

	@Override
	public boolean isDryRunReadOnly() {
		return true;
	}

	@Override
	public Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit) {
		long interval = spec.emissionIntervalNanos();
		long tolerance = spec.burst() * interval;
		long nowNanos = now * 1000L;
		long backlog = backlog(nowNanos);
		if (cost <= spec.burst() && backlog + cost * interval <= tolerance) {
			long newBacklog = backlog + cost * interval;
			if (commit) {
				this.tat = nowNanos + newBacklog;
			}
			return Decision.allowed(spec, (tolerance - newBacklog) / interval, nanosToMicrosCeil(newBacklog), 0);
		}
		long retryAfter = (cost > spec.burst()) ? Decision.NEVER
				: nanosToMicrosCeil(backlog + cost * interval - tolerance);
		return Decision.rejected(spec, (tolerance - backlog) / interval, nanosToMicrosCeil(backlog), retryAfter);
	}

	@Override
	public void refund(LimitSpec spec, long now, long cost) {
		long nowNanos = now * 1000L;
		long backlog = backlog(nowNanos);
		long interval = spec.emissionIntervalNanos();
		this.tat = (cost >= spec.burst()) ? nowNanos : nowNanos + Math.max(0, backlog - cost * interval);
	}

	@Override
	long available(LimitSpec spec, long now) {
		long interval = spec.emissionIntervalNanos();
		return (spec.burst() * interval - backlog(now * 1000L)) / interval;
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		return nanosToMicrosCeil(backlog(now * 1000L));
	}

	@Override
	public long expiresAtMicros(LimitSpec spec) {
		return (this.tat == Long.MIN_VALUE) ? Long.MIN_VALUE : nanosToMicrosCeil(this.tat);
	}

	/** How far the TAT is ahead of now: the credit taken and not yet restored. */
	private long backlog(long nowNanos) {
		return (this.tat == Long.MIN_VALUE) ? 0 : Math.max(0, this.tat - nowNanos);
	}

}
