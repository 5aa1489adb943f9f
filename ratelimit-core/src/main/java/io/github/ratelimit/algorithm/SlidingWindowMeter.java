package io.github.ratelimit.algorithm;

import java.math.BigInteger;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#SLIDING_WINDOW}: counters for the current and the previous
 * epoch-aligned window, and the estimate {@code prev * (W - elapsed) / W + curr}.
 * Compared in exact integer arithmetic ({@code prev * (W - elapsed) + curr * W} against
 * {@code L * W}), so a retry-after computed here is allowed at exactly that time.
 */
final class SlidingWindowMeter extends Meter {

	private long window = Long.MIN_VALUE;

	private long current;

	private long previous;

	SlidingWindowMeter(LimitSpec spec) {
		super(spec);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_WINDOW;
	}

	@Override
	public Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		roll(index);
		long elapsed = now - index * w;
		long limit = spec.limit();
		// Allowed iff previous * (w - elapsed) + (current + cost) * w <= limit * w.
		// Permits left in this window's count after this request, -1 when none: cost is
		// compared first, as limit - current - cost overflows for a huge cost on a count
		// above a lowered limit.
		long free = (cost <= limit - this.current) ? limit - this.current - cost : -1;
		if (free >= 0 && fitsUnder(this.previous, w - elapsed, free, w)) {
			if (commit) {
				this.current += cost;
			}
			long curr = this.current + (commit ? 0 : cost);
			long remaining = limit - curr - ceilDiv2(this.previous, w - elapsed, w);
			return Decision.allowed(spec, remaining, 2 * w - elapsed, 0);
		}
		long remaining = limit - this.current - ceilDiv2(this.previous, w - elapsed, w);
		if (cost > limit) {
			return Decision.rejected(spec, remaining, resetAfterMicros(spec, now), Decision.NEVER);
		}
		long retryAfter;
		long inThisWindow = (free >= 0) ? earliestElapsed(this.previous, free, w) : w;
		if (inThisWindow < w) {
			retryAfter = inThisWindow - elapsed;
		}
		else {
			// Next window: this window's count becomes the previous one, weighted down.
			retryAfter = (w - elapsed) + earliestElapsed(this.current, limit - cost, w);
		}
		return Decision.rejected(spec, remaining, resetAfterMicros(spec, now), retryAfter);
	}

	@Override
	public void refund(LimitSpec spec, long now, long cost) {
		roll(Math.floorDiv(now, spec.windowMicros()));
		long fromCurrent = Math.min(cost, this.current);
		this.current -= fromCurrent;
		this.previous = Math.max(0, this.previous - (cost - fromCurrent));
	}

	@Override
	long available(LimitSpec spec, long now) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		roll(index);
		return Math.max(0, spec.limit() - this.current - ceilDiv2(this.previous, w - (now - index * w), w));
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		roll(index);
		long untilNext = (index + 1) * w - now;
		if (this.current > 0) {
			return untilNext + w;
		}
		return (this.previous > 0) ? untilNext : 0;
	}

	@Override
	public long expiresAtMicros(LimitSpec spec) {
		// A state rolled by a rejection but holding no count is as good as fresh.
		if (this.current > 0) {
			return (this.window + 2) * spec.windowMicros();
		}
		return (this.previous > 0) ? (this.window + 1) * spec.windowMicros() : Long.MIN_VALUE;
	}

	private void roll(long index) {
		if (index == this.window) {
			return;
		}
		this.previous = (index == this.window + 1) ? this.current : 0;
		this.current = 0;
		this.window = index;
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
		long maxRemainingWeight = floorMulDiv(free, w, count);
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
		long floor = floorMulDiv(a, b, c);
		return fitsUnder(a, b, floor, c) ? floor : floor + 1;
	}

	/** {@code floor(a * b / c)} for non-negative operands whose result fits in a long. */
	private static long floorMulDiv(long a, long b, long c) {
		if (Math.multiplyHigh(a, b) == 0 && a * b >= 0) {
			return (a * b) / c;
		}
		return BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divide(BigInteger.valueOf(c)).longValueExact();
	}

}
