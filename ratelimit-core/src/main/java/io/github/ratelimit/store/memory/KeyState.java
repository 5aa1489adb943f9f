package io.github.ratelimit.store.memory;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.algorithm.Meter;

/**
 * The meters of one {@code (bucket, key)}, one per limit, in the order of the limits.
 * Only used under the owning map entry's lock.
 */
final class KeyState {

	private Meter[] meters = new Meter[0];

	/** The latest time seen, so the clock never goes backwards for this key. */
	private long lastNow = Long.MIN_VALUE;

	private long expiresAtMicros = Long.MIN_VALUE;

	Decision decide(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		long time = advance(now);
		Meter[] meters = meters(limits);
		Decision decision;
		if (meters.length == 1) {
			decision = meters[0].tryAcquire(limits.get(0), time, cost, maxDelayMicros, true);
		}
		else {
			boolean allowed = true;
			for (int i = 0; i < meters.length && allowed; i++) {
				allowed = meters[i].tryAcquire(limits.get(i), time, cost, maxDelayMicros, false).allowed();
			}
			List<Decision> decisions = new ArrayList<>(meters.length);
			for (int i = 0; i < meters.length; i++) {
				decisions.add(meters[i].tryAcquire(limits.get(i), time, cost, maxDelayMicros, allowed));
			}
			decision = Decision.combine(decisions);
		}
		updateExpiry(limits);
		return decision;
	}

	void refund(List<LimitSpec> limits, long now, long cost) {
		long time = advance(now);
		Meter[] meters = meters(limits);
		for (int i = 0; i < meters.length; i++) {
			meters[i].refund(limits.get(i), time, cost);
		}
		updateExpiry(limits);
	}

	Decision peek(List<LimitSpec> limits, long now) {
		long time = advance(now);
		Meter[] meters = meters(limits);
		if (meters.length == 1) {
			return meters[0].peek(limits.get(0), time);
		}
		List<Decision> decisions = new ArrayList<>(meters.length);
		for (int i = 0; i < meters.length; i++) {
			decisions.add(meters[i].peek(limits.get(i), time));
		}
		return Decision.combine(decisions);
	}

	boolean isFreshAt(long now) {
		return this.expiresAtMicros <= Math.max(now, this.lastNow);
	}

	long nanosUntilFresh(long currentTimeNanos) {
		if (this.expiresAtMicros == Long.MIN_VALUE) {
			return 0;
		}
		long until = this.expiresAtMicros - currentTimeNanos / 1000L;
		if (until <= 0) {
			return 0;
		}
		return (until > Long.MAX_VALUE / 1000L) ? Long.MAX_VALUE : until * 1000L;
	}

	private long advance(long now) {
		if (now > this.lastNow) {
			this.lastNow = now;
		}
		return this.lastNow;
	}

	private Meter[] meters(List<LimitSpec> limits) {
		Meter[] meters = this.meters;
		if (meters.length != limits.size()) {
			Meter[] resized = new Meter[limits.size()];
			System.arraycopy(meters, 0, resized, 0, Math.min(meters.length, resized.length));
			this.meters = resized;
			meters = resized;
		}
		for (int i = 0; i < meters.length; i++) {
			LimitSpec spec = limits.get(i);
			if (meters[i] == null || !meters[i].fits(spec)) {
				meters[i] = Meter.create(spec);
			}
		}
		return meters;
	}

	private void updateExpiry(List<LimitSpec> limits) {
		long expiresAt = Long.MIN_VALUE;
		for (int i = 0; i < this.meters.length; i++) {
			expiresAt = Math.max(expiresAt, this.meters[i].expiresAtMicros(limits.get(i)));
		}
		this.expiresAtMicros = expiresAt;
	}

}
