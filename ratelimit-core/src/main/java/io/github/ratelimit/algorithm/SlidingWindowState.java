package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#SLIDING_WINDOW}: counters for the current and the previous
 * epoch-aligned window, and the estimate {@code prev * (W - elapsed) / W + curr}.
 * Compared in exact integer arithmetic ({@code prev * (W - elapsed) + curr * W} against
 * {@code L * W}), so a retry-after computed here is allowed at exactly that time. A state
 * of an earlier window is rolled forward where it is read, so nothing needs tidying.
 */
final class SlidingWindowState extends LimitState {

	/** The window of the spec this state is for, part of its shape. */
	private final long windowMicros;

	private final long window;

	private final long current;

	private final long previous;

	SlidingWindowState(long windowMicros, long window, long current, long previous) {
		this.windowMicros = windowMicros;
		this.window = window;
		this.current = current;
		this.previous = previous;
	}

	@Override
	Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		long current = currentIn(index);
		long previous = previousIn(index);
		long elapsed = now - index * w;
		long limit = spec.limit();
		// Allowed iff previous * (w - elapsed) + (current + cost) * w <= limit * w.
		// Permits left in this window's count after this request, -1 when none: cost is
		// compared first, as limit - current - cost overflows for a huge cost on a count
		// above a lowered limit.
		long free = (cost <= limit - current) ? limit - current - cost : -1;
		if (free >= 0 && fitsUnder(previous, w - elapsed, free, w)) {
			long remaining = limit - current - cost - ceilDiv2(previous, w - elapsed, w);
			Decision allowed = Decision.allowed(spec, remaining, 2 * w - elapsed, 0);
			return new Transition(allowed, new SlidingWindowState(w, index, current + cost, previous), this);
		}
		long remaining = limit - current - ceilDiv2(previous, w - elapsed, w);
		if (cost > limit) {
			return Transition.rejected(Decision.rejected(spec, remaining, resetAfterMicros(spec, now), Decision.NEVER),
					this);
		}
		long retryAfter;
		long inThisWindow = (free >= 0) ? earliestElapsed(previous, free, w) : w;
		if (inThisWindow < w) {
			retryAfter = inThisWindow - elapsed;
		}
		else {
			// Next window: this window's count becomes the previous one, weighted down.
			retryAfter = (w - elapsed) + earliestElapsed(current, limit - cost, w);
		}
		return Transition.rejected(Decision.rejected(spec, remaining, resetAfterMicros(spec, now), retryAfter), this);
	}

	@Override
	public LimitState charge(LimitSpec spec, long now, long cost) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		long current = currentIn(index);
		long after = charged(current, cost, spec.limit());
		return (after == current) ? this : new SlidingWindowState(w, index, after, previousIn(index));
	}

	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		long index = Math.floorDiv(now, spec.windowMicros());
		long current = currentIn(index);
		long fromCurrent = Math.min(cost, current);
		return new SlidingWindowState(this.windowMicros, index, current - fromCurrent,
				Math.max(0, previousIn(index) - (cost - fromCurrent)));
	}

	@Override
	long available(LimitSpec spec, long now) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		return Math.max(0, spec.limit() - currentIn(index) - ceilDiv2(previousIn(index), w - (now - index * w), w));
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		long untilNext = (index + 1) * w - now;
		if (currentIn(index) > 0) {
			return untilNext + w;
		}
		return (previousIn(index) > 0) ? untilNext : 0;
	}

	@Override
	public long expiresAtMicros() {
		// A state holding no count is as good as fresh.
		if (this.current > 0) {
			return (this.window + 2) * this.windowMicros;
		}
		return (this.previous > 0) ? (this.window + 1) * this.windowMicros : Long.MIN_VALUE;
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return spec.algorithm() == Algorithm.SLIDING_WINDOW && spec.windowMicros() == this.windowMicros;
	}

	/** This state's current count, rolled to the window {@code index}. */
	private long currentIn(long index) {
		return (index == this.window) ? this.current : 0;
	}

	/** This state's previous count, rolled to the window {@code index}. */
	private long previousIn(long index) {
		if (index == this.window) {
			return this.previous;
		}
		return (index == this.window + 1) ? this.current : 0;
	}

	/**
	 * Returns the smallest elapsed time {@code e} in a window at which
	 * {@code count * (w - e) <= free * w}; {@code w} when only the next window helps.
	 */
	private static long earliestElapsed(long count, long free, long w) {
		if (free >= count) {
			// Also keeps free * w / count, which may not fit in a long, from being
			// computed.
			return 0;
		}
		// w - e <= floor(free * w / count)
		long maxRemainingWeight = MulDiv.quotient(free, w, count);
		return Math.max(0, w - maxRemainingWeight);
	}

	/** Whether {@code a * b <= c * d}, exactly, for non-negative operands. */
	private static boolean fitsUnder(long a, long b, long c, long d) {
		long highLeft = Math.multiplyHigh(a, b);
		long highRight = Math.multiplyHigh(c, d);
		if (highLeft != highRight) {
			return highLeft < highRight;
		}
		return Long.compareUnsigned(a * b, c * d) <= 0;
	}

	/** {@code ceil(a * b / c)} for non-negative operands whose result fits in a long. */
	private static long ceilDiv2(long a, long b, long c) {
		long floor = MulDiv.quotient(a, b, c);
		return fitsUnder(a, b, floor, c) ? floor : floor + 1;
	}

}
