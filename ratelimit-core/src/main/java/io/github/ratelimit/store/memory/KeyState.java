package io.github.ratelimit.store.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.algorithm.Meter;

/**
 * The meters of one {@code (bucket, key)}, one per limit, in the order of the limits, and
 * how long the store's map holds them.
 * <p>
 * Every write runs under this object's monitor; a rejection may be repeated without it
 * (see {@link #rejectWithoutLock}). Operations come two ways: inside the map's
 * {@code compute} for the entry (creating the state, or when the hold must be extended),
 * or straight on a state read from the map, which is what keeps a hot key free of map
 * writes. The second way is safe because the map holds the state until
 * {@link #heldUntilMicros}, and a straight operation only runs while a decision made now
 * cannot make the state matter past that time ({@link Meter#lifetimeMicros}). Once the
 * map lets go of the state (expiry, eviction, reset, or a decision that left it fresh) it
 * is {@link #retire() retired}, and straight operations refuse it, so no decision is ever
 * made on a state the map no longer holds.
 */
final class KeyState {

	/**
	 * The longest hold, in microseconds: Caffeine caps expiry at
	 * {@code Long.MAX_VALUE >> 1} ns (about 146 years), and a hold must never outlast the
	 * map's real one. It is longer than any state's lifetime (two windows of at most 50
	 * years).
	 */
	private static final long MAX_HOLD_MICROS = (Long.MAX_VALUE >> 1) / 1000L;

	/**
	 * The hold beyond the lifetime, at most: how long a hot key goes without a map write,
	 * and how long past its lifetime an idle key may stay.
	 */
	private static final long MAX_SLACK_MICROS = 1_000_000L;

	private static final VarHandle VERSION;

	static {
		try {
			VERSION = MethodHandles.lookup().findVarHandle(KeyState.class, "version", long.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private Meter[] meters = new Meter[0];

	/**
	 * States of earlier limits at a position, kept until they are fresh again: a limit
	 * whose algorithm, window or segments changed is a state of its own, as it is a key
	 * of its own in Redis, and comes back if the limit changes back in its lifetime.
	 * {@code null} while there is none, which is almost always.
	 */
	private @Nullable List<Parked> parked;

	/**
	 * {@code meters[0]} once fitted: a single-limit decision on a held key then reaches
	 * its meter without going through the array, one memory access less on a cold key.
	 */
	private @Nullable Meter first;

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
	 * Even while no write is under way, odd during one; every write under the lock moves
	 * it on by two. See {@link #rejectWithoutLock}.
	 */
	private long version;

	/**
	 * Whether the latest decision under the lock was a rejection: worth trying one
	 * without.
	 */
	private boolean rejecting;

	/**
	 * Decides on a state read from the map, unless that needs the map.
	 * @return the decision, or {@code null} when the caller must decide inside the map's
	 * compute instead
	 */
	@Nullable Decision decideIfHeld(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		Decision rejection = (this.rejecting) ? rejectWithoutLock(limits, now, cost, maxDelayMicros) : null;
		if (rejection != null) {
			return rejection;
		}
		synchronized (this) {
			if (!held(limits, now)) {
				return null;
			}
			long version = beginWrite();
			try {
				return decide(limits, now, cost, maxDelayMicros);
			}
			finally {
				endWrite(version);
			}
		}
	}

	/**
	 * Decides inside the map's compute and extends the hold, or retires the state when
	 * the decision left it fresh.
	 */
	synchronized Decision decideAndHold(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		long version = beginWrite();
		try {
			Decision decision = decide(limits, now, cost, maxDelayMicros);
			hold(limits, now);
			return decision;
		}
		finally {
			endWrite(version);
		}
	}

	/**
	 * Refunds on a state read from the map, unless that needs the map.
	 * @return whether the refund was made
	 */
	synchronized boolean refundIfHeld(List<LimitSpec> limits, long now, long cost) {
		if (!held(limits, now)) {
			return false;
		}
		long version = beginWrite();
		try {
			refund(limits, now, cost);
			return true;
		}
		finally {
			endWrite(version);
		}
	}

	/**
	 * Refunds inside the map's compute; see {@link #decideAndHold}.
	 */
	synchronized void refundAndHold(List<LimitSpec> limits, long now, long cost) {
		long version = beginWrite();
		try {
			refund(limits, now, cost);
			hold(limits, now);
		}
		finally {
			endWrite(version);
		}
	}

	/**
	 * Reports on a state read from the map.
	 * @return the state, or {@code null} when the caller must look inside the map's
	 * compute instead
	 */
	synchronized @Nullable Decision peekIfHeld(List<LimitSpec> limits, long now) {
		if (!held(limits, now)) {
			return null;
		}
		long version = beginWrite();
		try {
			return peek(limits, now);
		}
		finally {
			endWrite(version);
		}
	}

	/**
	 * Reports inside the map's compute; see {@link #decideAndHold}.
	 */
	synchronized Decision peekAndHold(List<LimitSpec> limits, long now) {
		long version = beginWrite();
		try {
			Decision decision = peek(limits, now);
			hold(limits, now);
			return decision;
		}
		finally {
			endWrite(version);
		}
	}

	/**
	 * Makes the states of {@code limits} fresh inside the map's compute, and only those:
	 * states of other limits (set aside after a change) stay, as their keys stay in
	 * Redis.
	 */
	synchronized void resetAndHold(List<LimitSpec> limits, long now) {
		long version = beginWrite();
		try {
			advance(now);
			Meter[] meters = meters(limits);
			for (int i = 0; i < meters.length; i++) {
				meters[i] = Meter.create(limits.get(i));
			}
			this.first = meters[0];
			this.heldFor = List.of();
			hold(limits, now);
		}
		finally {
			endWrite(version);
		}
	}

	/**
	 * Repeats the rejection of a busy key without taking the lock, so that threads turned
	 * away from one key do not queue for it: the meter's dry run only reads, and the
	 * {@link #version} read before and after proves no write overlapped it. A rejection
	 * changes nothing, so returning it is the same as deciding under the lock at that
	 * moment.
	 * @return the rejection, or {@code null} when the caller must take the lock: an
	 * allowed request, a write in progress, several limits, or a meter whose dry run
	 * writes
	 */
	private @Nullable Decision rejectWithoutLock(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		long version = (long) VERSION.getAcquire(this);
		Meter meter = this.first;
		if ((version & 1) != 0 || this.retired || limits != this.heldFor || limits.size() != 1 || meter == null
				|| !meter.isDryRunReadOnly()) {
			return null;
		}
		long time = Math.max(now, this.lastNow);
		if (time > this.straightUntilMicros) {
			return null;
		}
		Decision decision = meter.tryAcquire(limits.get(0), time, cost, maxDelayMicros, false);
		VarHandle.acquireFence();
		if ((long) VERSION.getOpaque(this) != version || decision.allowed()) {
			return null;
		}
		return decision;
	}

	/**
	 * Marks a write as under way, for {@link #rejectWithoutLock} readers; called under
	 * the lock.
	 * @return the version before the write
	 */
	private long beginWrite() {
		long version = this.version;
		VERSION.setOpaque(this, version + 1);
		VarHandle.storeStoreFence();
		return version;
	}

	private void endWrite(long version) {
		VERSION.setRelease(this, version + 2);
	}

	/**
	 * Marks the state as no longer held by the map. Called under the map's lock for the
	 * entry, as the map lets go of it.
	 */
	synchronized void retire() {
		long version = beginWrite();
		this.retired = true;
		endWrite(version);
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
		List<Parked> parked = this.parked;
		if (parked != null) {
			parked.removeIf((p) -> p.meter.expiresAtMicros() <= time);
			for (Parked p : parked) {
				lifetime = Math.max(lifetime, p.meter.expiresAtMicros() - time);
			}
			this.parked = parked.isEmpty() ? null : parked;
		}
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
		if (this.parked != null) {
			for (Parked p : this.parked) {
				expiresAt = Math.max(expiresAt, p.meter.expiresAtMicros());
			}
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
		if (limits == this.heldFor && this.first != null && limits.size() == 1) {
			Decision decision = this.first.tryAcquire(limits.get(0), time, cost, maxDelayMicros, true);
			this.rejecting = !decision.allowed();
			return decision;
		}
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
			for (int i = resized.length; i < meters.length; i++) {
				park(i, meters[i]);
			}
			this.meters = resized;
			meters = resized;
			this.heldFor = List.of();
		}
		for (int i = 0; i < meters.length; i++) {
			LimitSpec spec = limits.get(i);
			if (meters[i] == null || !meters[i].fits(spec)) {
				Meter previous = meters[i];
				meters[i] = unpark(i, spec);
				if (previous != null) {
					park(i, previous);
				}
				this.heldFor = List.of();
			}
		}
		this.first = meters[0];
		return meters;
	}

	private void park(int index, Meter meter) {
		if (meter.expiresAtMicros() <= this.lastNow) {
			return;
		}
		List<Parked> parked = this.parked;
		if (parked == null) {
			parked = new ArrayList<>(2);
			this.parked = parked;
		}
		parked.add(new Parked(index, meter));
	}

	private Meter unpark(int index, LimitSpec spec) {
		List<Parked> parked = this.parked;
		if (parked != null) {
			for (int i = 0; i < parked.size(); i++) {
				Parked p = parked.get(i);
				if (p.index == index && p.meter.fits(spec)) {
					parked.remove(i);
					return p.meter;
				}
			}
		}
		return Meter.create(spec);
	}

	/**
	 * A state set aside at its position in the limits.
	 */
	private record Parked(int index, Meter meter) {
	}

}
