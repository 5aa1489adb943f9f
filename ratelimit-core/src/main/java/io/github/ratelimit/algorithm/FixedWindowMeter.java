package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#FIXED_WINDOW}: a counter for the window {@code floor(t / W)}.
 */
final class FixedWindowMeter extends Meter {

	private long window = Long.MIN_VALUE;

	private long count;

	FixedWindowMeter(LimitSpec spec) {
		super(spec);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.FIXED_WINDOW;
	}

	@Override
	public boolean isDryRunReadOnly() {
		return true;
	}

	@Override
	public Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		long used = (index == this.window) ? this.count : 0;
		long untilNextWindow = (index + 1) * w - now;
		// cost <= limit - used, as used + cost may overflow; used may exceed a lowered
		// limit.
		if (cost <= spec.limit() - used) {
			if (commit) {
				this.window = index;
				this.count = used + cost;
			}
			return Decision.allowed(spec, spec.limit() - used - cost, untilNextWindow, 0);
		}
		long retryAfter = (cost > spec.limit()) ? Decision.NEVER : untilNextWindow;
		return Decision.rejected(spec, spec.limit() - used, (used > 0) ? untilNextWindow : 0, retryAfter);
	}

	@Override
	public void refund(LimitSpec spec, long now, long cost) {
		if (Math.floorDiv(now, spec.windowMicros()) == this.window) {
			this.count = Math.max(0, this.count - cost);
		}
	}

	@Override
	long available(LimitSpec spec, long now) {
		long used = (Math.floorDiv(now, spec.windowMicros()) == this.window) ? this.count : 0;
		return spec.limit() - used;
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long index = Math.floorDiv(now, spec.windowMicros());
		return (index == this.window && this.count > 0) ? (index + 1) * spec.windowMicros() - now : 0;
	}

	@Override
	public long expiresAtMicros(LimitSpec spec) {
		return (this.window == Long.MIN_VALUE) ? Long.MIN_VALUE : (this.window + 1) * spec.windowMicros();
	}

}
