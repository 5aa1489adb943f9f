package io.github.ratelimit.algorithm;

import java.util.Arrays;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#SLIDING_WINDOW_COUNTER}: {@code N} counters for epoch-aligned
 * sub-windows of {@code S = W / N}; a request is counted against the current sub-window
 * and the {@code N - 1} before it. A sub-window leaves the sum once it ends more than
 * {@code W} ago, so the error is bounded by {@code S}.
 */
final class SlidingWindowCounterMeter extends Meter {

	private final long[] counts;

	/** Index of the newest sub-window held in {@link #counts}. */
	private long newest = Long.MIN_VALUE;

	private long sum;

	SlidingWindowCounterMeter(LimitSpec spec) {
		super(spec);
		this.counts = new long[spec.segments()];
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_WINDOW_COUNTER;
	}

	@Override
	public Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit) {
		long s = spec.segmentMicros();
		long segment = Math.floorDiv(now, s);
		roll(segment);
		long limit = spec.limit();
		// cost <= limit - sum, as sum + cost may overflow; sum may exceed a lowered
		// limit.
		if (cost <= limit - this.sum) {
			if (commit) {
				this.counts[slot(segment)] += cost;
				this.sum += cost;
			}
			return Decision.allowed(spec, limit - this.sum - (commit ? 0 : cost),
					(segment + this.counts.length) * s - now, 0);
		}
		long retryAfter = Decision.NEVER;
		if (cost <= limit) {
			// Oldest sub-windows leave first: sub-window k leaves at (k + N) * S.
			long released = 0;
			for (long k = segment - this.counts.length + 1; k <= segment; k++) {
				released += this.counts[slot(k)];
				if (cost <= limit - (this.sum - released)) {
					retryAfter = (k + this.counts.length) * s - now;
					break;
				}
			}
		}
		return Decision.rejected(spec, limit - this.sum, resetAfterMicros(spec, now), retryAfter);
	}

	@Override
	public void refund(LimitSpec spec, long now, long cost) {
		long segment = Math.floorDiv(now, spec.segmentMicros());
		roll(segment);
		long left = cost;
		for (long k = segment; k > segment - this.counts.length && left > 0; k--) {
			int slot = slot(k);
			long taken = Math.min(left, this.counts[slot]);
			this.counts[slot] -= taken;
			this.sum -= taken;
			left -= taken;
		}
	}

	@Override
	long available(LimitSpec spec, long now) {
		roll(Math.floorDiv(now, spec.segmentMicros()));
		return Math.max(0, spec.limit() - this.sum);
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long segment = Math.floorDiv(now, spec.segmentMicros());
		roll(segment);
		for (long k = segment; k > segment - this.counts.length; k--) {
			if (this.counts[slot(k)] > 0) {
				return (k + this.counts.length) * spec.segmentMicros() - now;
			}
		}
		return 0;
	}

	@Override
	public long expiresAtMicros(LimitSpec spec) {
		// A state rolled by a rejection but holding no count is as good as fresh.
		return (this.newest == Long.MIN_VALUE || this.sum == 0) ? Long.MIN_VALUE
				: (this.newest + this.counts.length) * spec.segmentMicros();
	}

	private void roll(long segment) {
		if (segment <= this.newest) {
			return;
		}
		int n = this.counts.length;
		if (this.newest == Long.MIN_VALUE || segment - this.newest >= n) {
			Arrays.fill(this.counts, 0);
			this.sum = 0;
		}
		else {
			for (long k = this.newest + 1; k <= segment; k++) {
				int slot = slot(k);
				this.sum -= this.counts[slot];
				this.counts[slot] = 0;
			}
		}
		this.newest = segment;
	}

	private int slot(long segment) {
		return (int) Math.floorMod(segment, (long) this.counts.length);
	}

}
