package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#SLIDING_WINDOW_COUNTER}: {@code N} counters for epoch-aligned
 * sub-windows of {@code S = W / N}; a request is counted against the current sub-window
 * and the {@code N - 1} before it. A sub-window leaves the sum once it ends more than
 * {@code W} ago, so the error is bounded by {@code S}.
 * <p>
 * The counters are never written once the state is built: a rejection reads the sum as
 * rolled forward without copying them, and only a state that takes or gives back permits
 * is a new copy of {@code N} counters.
 */
final class SlidingWindowCounterState extends LimitState {

	/** The sub-window of the spec this state is for, part of its shape with {@code N}. */
	private final long segmentMicros;

	/** Counts of the sub-windows up to {@link #newest}, at {@code floorMod(k, N)}. */
	private final long[] counts;

	/** Index of the newest sub-window held in {@link #counts}. */
	private final long newest;

	private final long sum;

	private SlidingWindowCounterState(long segmentMicros, long[] counts, long newest, long sum) {
		this.segmentMicros = segmentMicros;
		this.counts = counts;
		this.newest = newest;
		this.sum = sum;
	}

	static SlidingWindowCounterState fresh(long segmentMicros, int segments) {
		return new SlidingWindowCounterState(segmentMicros, new long[segments], Long.MIN_VALUE, 0);
	}

	@Override
	Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		long s = spec.segmentMicros();
		long segment = Math.floorDiv(now, s);
		long sum = sumIn(segment);
		long limit = spec.limit();
		int n = this.counts.length;
		// cost <= limit - sum, as sum + cost may overflow; sum may exceed a lowered
		// limit.
		if (cost <= limit - sum) {
			long[] counts = rolledCounts(segment);
			counts[slot(segment)] += cost;
			Decision allowed = Decision.allowed(spec, limit - sum - cost, (segment + n) * s - now, 0);
			return new Transition(allowed, new SlidingWindowCounterState(this.segmentMicros, counts,
					Math.max(segment, this.newest), sum + cost), this);
		}
		long retryAfter = Decision.NEVER;
		if (cost <= limit) {
			// Oldest sub-windows leave first: sub-window k leaves at (k + N) * S.
			long released = 0;
			for (long k = segment - n + 1; k <= segment; k++) {
				released += countIn(segment, k);
				if (cost <= limit - (sum - released)) {
					retryAfter = (k + n) * s - now;
					break;
				}
			}
		}
		return Transition.rejected(Decision.rejected(spec, limit - sum, resetAfterMicros(spec, now), retryAfter), this);
	}

	@Override
	public LimitState charge(LimitSpec spec, long now, long cost) {
		long segment = Math.floorDiv(now, spec.segmentMicros());
		long sum = sumIn(segment);
		long taken = charged(sum, cost, spec.limit()) - sum;
		if (taken == 0) {
			return this;
		}
		long[] counts = rolledCounts(segment);
		counts[slot(segment)] += taken;
		return new SlidingWindowCounterState(this.segmentMicros, counts, Math.max(segment, this.newest), sum + taken);
	}

	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		long segment = Math.floorDiv(now, spec.segmentMicros());
		long[] counts = rolledCounts(segment);
		long sum = sumIn(segment);
		long left = cost;
		for (long k = segment; k > segment - counts.length && left > 0; k--) {
			int slot = slot(k);
			long taken = Math.min(left, counts[slot]);
			counts[slot] -= taken;
			sum -= taken;
			left -= taken;
		}
		return new SlidingWindowCounterState(this.segmentMicros, counts, Math.max(segment, this.newest), sum);
	}

	@Override
	long available(LimitSpec spec, long now) {
		return Math.max(0, spec.limit() - sumIn(Math.floorDiv(now, spec.segmentMicros())));
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long segment = Math.floorDiv(now, spec.segmentMicros());
		for (long k = segment; k > segment - this.counts.length; k--) {
			if (countIn(segment, k) > 0) {
				return (k + this.counts.length) * spec.segmentMicros() - now;
			}
		}
		return 0;
	}

	@Override
	public long expiresAtMicros() {
		// A state holding no count is as good as fresh.
		return (this.newest == Long.MIN_VALUE || this.sum == 0) ? Long.MIN_VALUE
				: (this.newest + this.counts.length) * this.segmentMicros;
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return spec.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER && spec.segmentMicros() == this.segmentMicros
				&& spec.segments() == this.counts.length;
	}

	/**
	 * The count of sub-window {@code k} as read at sub-window {@code segment}, for
	 * {@code k} in the window ending there.
	 */
	private long countIn(long segment, long k) {
		// Rolling forward to segment empties the slots of the sub-windows after newest.
		if (segment > this.newest && (this.newest == Long.MIN_VALUE || k > this.newest)) {
			return 0;
		}
		return this.counts[slot(k)];
	}

	/** The sum as rolled forward to sub-window {@code segment}. */
	private long sumIn(long segment) {
		if (segment <= this.newest) {
			return this.sum;
		}
		if (this.newest == Long.MIN_VALUE || segment - this.newest >= this.counts.length) {
			return 0;
		}
		long sum = this.sum;
		for (long k = this.newest + 1; k <= segment; k++) {
			// Sub-window k takes the slot of k - N, which leaves.
			sum -= this.counts[slot(k)];
		}
		return sum;
	}

	/** A copy of the counts rolled forward to sub-window {@code segment}. */
	private long[] rolledCounts(long segment) {
		int n = this.counts.length;
		if (segment <= this.newest) {
			return this.counts.clone();
		}
		long[] counts = new long[n];
		if (this.newest != Long.MIN_VALUE && segment - this.newest < n) {
			for (long k = segment - n + 1; k <= this.newest; k++) {
				int slot = slot(k);
				counts[slot] = this.counts[slot];
			}
		}
		return counts;
	}

	private int slot(long segment) {
		return (int) Math.floorMod(segment, (long) this.counts.length);
	}

}
