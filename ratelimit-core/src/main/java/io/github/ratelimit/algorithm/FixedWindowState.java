package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#FIXED_WINDOW}: a counter for the window {@code floor(t / W)}. A count
 * of an earlier window reads as 0, so nothing needs tidying.
 */
final class FixedWindowState extends LimitState {

	/** The window of the spec this state is for, part of its shape. */
	private final long windowMicros;

	private final long window;

	private final long count;

	FixedWindowState(long windowMicros, long window, long count) {
		this.windowMicros = windowMicros;
		this.window = window;
		this.count = count;
	}

	@Override
	Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		long used = (index == this.window) ? this.count : 0;
		long untilNextWindow = (index + 1) * w - now;
		// cost <= limit - used, as used + cost may overflow; used may exceed a lowered
		// limit.
		if (cost <= spec.limit() - used) {
			Decision allowed = Decision.allowed(spec, spec.limit() - used - cost, untilNextWindow, 0);
			return new Transition(allowed, new FixedWindowState(w, index, used + cost), this);
		}
		long retryAfter = (cost > spec.limit()) ? Decision.NEVER : untilNextWindow;
		return Transition
			.rejected(Decision.rejected(spec, spec.limit() - used, (used > 0) ? untilNextWindow : 0, retryAfter), this);
	}

	@Override
	public LimitState charge(LimitSpec spec, long now, long cost) {
		long w = spec.windowMicros();
		long index = Math.floorDiv(now, w);
		long used = (index == this.window) ? this.count : 0;
		long after = charged(used, cost, spec.limit());
		return (after == used) ? this : new FixedWindowState(w, index, after);
	}

	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		if (Math.floorDiv(now, spec.windowMicros()) != this.window) {
			return this;
		}
		return new FixedWindowState(this.windowMicros, this.window, Math.max(0, this.count - cost));
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
	public long expiresAtMicros() {
		return (this.window == Long.MIN_VALUE) ? Long.MIN_VALUE : (this.window + 1) * this.windowMicros;
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return spec.algorithm() == Algorithm.FIXED_WINDOW && spec.windowMicros() == this.windowMicros;
	}

}
