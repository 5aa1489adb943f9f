package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#SLIDING_LOG}: the time of every admitted permit in the last {@code W},
 * in a ring buffer that grows up to {@code L} entries. Entries at or before {@code t - W}
 * are dropped; exact over every window.
 */
final class SlidingLogMeter extends Meter {

	private static final int INITIAL_CAPACITY = 8;

	private long[] log;

	private int head;

	private int size;

	SlidingLogMeter(LimitSpec spec) {
		super(spec);
		this.log = new long[(int) Math.min(INITIAL_CAPACITY, spec.limit())];
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_LOG;
	}

	@Override
	public Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit) {
		evict(now - spec.windowMicros());
		long limit = spec.limit();
		// cost <= limit - size, as size + cost may overflow; size may exceed a lowered
		// limit.
		if (cost <= limit - this.size) {
			if (commit) {
				append(now, (int) cost, limit);
			}
			return Decision.allowed(spec, limit - this.size - (commit ? 0 : cost), spec.windowMicros(), 0);
		}
		long retryAfter;
		if (cost > limit) {
			retryAfter = Decision.NEVER;
		}
		else {
			// The oldest (size + cost - limit) entries must leave the window.
			long mustExpire = at((int) (this.size + cost - limit) - 1);
			retryAfter = mustExpire + spec.windowMicros() - now;
		}
		return Decision.rejected(spec, limit - this.size, resetAfterMicros(spec, now), retryAfter);
	}

	@Override
	public void refund(LimitSpec spec, long now, long cost) {
		evict(now - spec.windowMicros());
		this.size = (int) Math.max(0, this.size - cost);
	}

	@Override
	long available(LimitSpec spec, long now) {
		evict(now - spec.windowMicros());
		return spec.limit() - this.size;
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		return (this.size > 0) ? at(this.size - 1) + spec.windowMicros() - now : 0;
	}

	@Override
	public long expiresAtMicros(LimitSpec spec) {
		return (this.size > 0) ? at(this.size - 1) + spec.windowMicros() : Long.MIN_VALUE;
	}

	private void evict(long threshold) {
		while (this.size > 0 && this.log[this.head] <= threshold) {
			this.head = (this.head + 1 == this.log.length) ? 0 : this.head + 1;
			this.size--;
		}
	}

	private long at(int i) {
		int index = this.head + i;
		return this.log[(index >= this.log.length) ? index - this.log.length : index];
	}

	private void append(long time, int count, long limit) {
		int needed = this.size + count;
		if (needed > this.log.length) {
			grow((int) Math.min(limit, Math.max(needed, (long) this.log.length * 2)));
		}
		for (int i = 0; i < count; i++) {
			int index = this.head + this.size;
			this.log[(index >= this.log.length) ? index - this.log.length : index] = time;
			this.size++;
		}
	}

	private void grow(int capacity) {
		long[] grown = new long[capacity];
		for (int i = 0; i < this.size; i++) {
			grown[i] = at(i);
		}
		this.log = grown;
		this.head = 0;
	}

}
