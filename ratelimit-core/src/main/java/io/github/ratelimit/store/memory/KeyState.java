package io.github.ratelimit.store.memory;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.algorithm.Meter;

/**
 * The meters of one {@code (bucket, key)}, one per limit, in the order of the limits, and
 * how long the store's map holds them.
 * <p>
 * Every operation runs under this object's monitor. Operations come two ways: inside the
 * map's {@code compute} for the entry (creating the state, or when the hold must be
 * extended), or straight on a state read from the map, which is what keeps a hot key free
 * of map writes. The second way is safe because the map holds the state until
 * {@link #heldUntilMicros}, and a straight operation only runs while a decision made now
 * cannot make the state matter past that time ({@link Meter#lifetimeMicros}). Once the
 * map lets go of the state (expiry, eviction, reset, or a decision that left it fresh) it
 * is {@link #retire() retired}, and straight operations refuse it, so no decision is ever
 * made on a state the map no longer holds.
 */
final class KeyState {

	/**
	 * The longest hold, in microseconds: Caffeine caps expiry at about 146 years, and a
	 * hold must never outlast the map's real one.
	 */
	private static final long MAX_HOLD_MICROS = (Long.MAX_VALUE >> 2) / 1000L;

	/**
	 * The hold beyond the lifetime, at most: how long a hot key goes without a map write,
	 * and how long past its lifetime an idle key may stay.
	 */
	private static final long MAX_SLACK_MICROS = 1_000_000L;

	private Meter[] meters = new Meter[0];

	/** The latest time seen, so the clock never goes backwards for this key. */
	private long lastNow = Long.MIN_VALUE;

	/** Until when the map holds this state; meaningful once the map has it. */
	private long heldUntilMicros = Long.MIN_VALUE;

	/**
	 * The limits the hold was last extended for, and the latest time at which a decision
	 * under them still fits in the hold; saves working out their lifetime per decision.
	 * Compared by identity: callers keep one immutable list per bucket.
	 */
	private List<LimitSpec> heldFor = List.of();

	private long straightUntilMicros = Long.MIN_VALUE;

	private boolean retired;

	/**
	 * Decides on a state read from the map, unless that needs the map.
	 * @return the decision, or {@code null} when the caller must decide inside the map's
	 * compute instead
	 */
	synchronized Decision decideIfHeld(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		return held(limits, now) ? decide(limits, now, cost, maxDelayMicros) : null;
	}

	/**
	 * Decides inside the map's compute and extends the hold, or retires the state when
	 * the decision left it fresh.
	 */
	synchronized Decision decideAndHold(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		Decision decision = decide(limits, now, cost, maxDelayMicros);
		hold(limits, now);
		return decision;
	}

	/**
	 * Refunds on a state read from the map, unless that needs the map.
	 * @return whether the refund was made
	 */
	synchronized boolean refundIfHeld(List<LimitSpec> limits, long now, long cost) {
		if (!held(limits, now)) {
			return false;
		}
		refund(limits, now, cost);
		return true;
	}

	/**
	 * Refunds inside the map's compute; see {@link #decideAndHold}.
	 */
	synchronized void refundAndHold(List<LimitSpec> limits, long now, long cost) {
		refund(limits, now, cost);
		hold(limits, now);
	}

	/**
	 * Reports on a state read from the map.
	 * @return the state, or {@code null} when the caller must look inside the map's
	 * compute instead
	 */
	synchronized Decision peekIfHeld(List<LimitSpec> limits, long now) {
		return held(limits, now) ? peek(limits, now) : null;
	}

	/**
	 * Reports inside the map's compute; see {@link #decideAndHold}.
	 */
	synchronized Decision peekAndHold(List<LimitSpec> limits, long now) {
		Decision decision = peek(limits, now);
		hold(limits, now);
		return decision;
	}

	/**
	 * Marks the state as no longer held by the map. Called under the map's lock for the
	 * entry, as the map lets go of it.
	 */
	synchronized void retire() {
		this.retired = true;
	}

	synchronized boolean isRetired() {
		return this.retired;
	}

	/**
	 * Returns how long from {@code currentTimeNanos} the map must hold this state.
	 * @param currentTimeNanos the map's clock: the store's clock in nanoseconds
	 * @return the duration in nanoseconds
	 */
	synchronized long nanosHeldAfter(long currentTimeNanos) {
		long micros = this.heldUntilMicros - currentTimeNanos / 1000L;
		return (micros <= 0) ? 0 : micros * 1000L;
	}

	private boolean held(List<LimitSpec> limits, long now) {
		if (this.retired) {
			return false;
		}
		long time = Math.max(now, this.lastNow);
		if (limits == this.heldFor) {
			return time <= this.straightUntilMicros;
		}
		return time <= this.heldUntilMicros - lifetimeMicros(limits);
	}

	/**
	 * Holds the state long enough for any decision within the slack to stay inside the
	 * hold, or retires it when it is as good as fresh.
	 */
	private void hold(List<LimitSpec> limits, long now) {
		long time = Math.max(now, this.lastNow);
		if (expiresAtMicros(limits) <= time) {
			this.retired = true;
			return;
		}
		long lifetime = lifetimeMicros(limits);
		long slack = Math.min(lifetime, MAX_SLACK_MICROS);
		this.heldUntilMicros = time + Math.min(lifetime + slack, MAX_HOLD_MICROS);
		this.heldFor = limits;
		this.straightUntilMicros = this.heldUntilMicros - lifetime;
	}

	private long expiresAtMicros(List<LimitSpec> limits) {
		long expiresAt = Long.MIN_VALUE;
		for (int i = 0; i < this.meters.length; i++) {
			expiresAt = Math.max(expiresAt, this.meters[i].expiresAtMicros(limits.get(i)));
		}
		return expiresAt;
	}

	private static long lifetimeMicros(List<LimitSpec> limits) {
		long lifetime = 0;
		for (int i = 0; i < limits.size(); i++) {
			lifetime = Math.max(lifetime, Meter.lifetimeMicros(limits.get(i)));
		}
		return lifetime;
	}

	private Decision decide(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
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
		return decision;
	}

	private void refund(List<LimitSpec> limits, long now, long cost) {
		long time = advance(now);
		Meter[] meters = meters(limits);
		for (int i = 0; i < meters.length; i++) {
			meters[i].refund(limits.get(i), time, cost);
		}
	}

	private Decision peek(List<LimitSpec> limits, long now) {
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

	private long advance(long now) {
		if (now > this.lastNow) {
			this.lastNow = now;
		}
		return this.lastNow;
	}

	private Meter[] meters(List<LimitSpec> limits) {
		if (limits == this.heldFor) {
			// Fitted to these limits when the hold was taken, and not replaced since.
			return this.meters;
		}
		Meter[] meters = this.meters;
		if (meters.length != limits.size()) {
			Meter[] resized = new Meter[limits.size()];
			System.arraycopy(meters, 0, resized, 0, Math.min(meters.length, resized.length));
			this.meters = resized;
			meters = resized;
			this.heldFor = List.of();
		}
		for (int i = 0; i < meters.length; i++) {
			LimitSpec spec = limits.get(i);
			if (meters[i] == null || !meters[i].fits(spec)) {
				meters[i] = Meter.create(spec);
				this.heldFor = List.of();
			}
		}
		return meters;
	}

}
