package io.github.ratelimit.store.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.algorithm.LimitState;
import io.github.ratelimit.algorithm.Transition;

/**
 * The states of one {@code (bucket, key)}, one per limit, in the order of the limits, and
 * how long the store's map holds them.
 * <p>
 * Everything is one immutable {@link Snapshot}, replaced as a whole by compare-and-set:
 * an operation reads the snapshot, computes the next one with the algorithms' pure
 * functions, and stores it if no other operation stored one meanwhile, or starts over. So
 * no operation takes a lock, and a decision that changes nothing (a rejection) stores
 * nothing.
 * <p>
 * Operations come two ways: inside the map's {@code compute} for the entry (creating the
 * state, or when the hold must be extended), or straight on a state read from the map,
 * which is what keeps a hot key free of map writes. The second way is safe because the
 * map holds the state until {@link Snapshot#heldUntilMicros}, and a straight operation
 * only runs while a decision made now cannot make the state matter past that time
 * ({@link LimitState#lifetimeMicros}). Once the map lets go of the state (expiry,
 * eviction, reset, or a decision that left it fresh) it is {@link #retire() retired},
 * which is a snapshot too: a straight operation that read the one before fails to store
 * its own and, starting over, refuses the state, so no decision is ever made on a state
 * the map no longer holds.
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

	private static final VarHandle SNAPSHOT;

	static {
		try {
			SNAPSHOT = MethodHandles.lookup().findVarHandle(KeyState.class, "snapshot", Snapshot.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private volatile Snapshot snapshot = Snapshot.EMPTY;

	/**
	 * Decides on a state read from the map, unless that needs the map.
	 * @return the decision, or {@code null} when the caller must decide inside the map's
	 * compute instead
	 */
	@Nullable Decision decideIfHeld(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		while (true) {
			Snapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (!current.straight(limits, time)) {
				return null;
			}
			LimitState state = current.first;
			if (limits == current.heldFor && state != null && current.others.length == 0) {
				// The hot path: one limit, fitted when the hold was taken.
				Transition transition = state.acquire(limits.get(0), time, cost, maxDelayMicros);
				if (transition.next() == state
						|| SNAPSHOT.compareAndSet(this, current, current.with(transition.next(), time))) {
					return transition.decision();
				}
				continue;
			}
			Change change = decide(current, limits, time, cost, maxDelayMicros);
			if (store(current, change.next)) {
				return change.decision;
			}
		}
	}

	/**
	 * Decides inside the map's compute and extends the hold, or retires the state when
	 * the decision left it fresh.
	 */
	Decision decideAndHold(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		while (true) {
			Snapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			Change change = decide(current, limits, time, cost, maxDelayMicros);
			if (store(current, hold(change.next, limits, time))) {
				return change.decision;
			}
		}
	}

	/**
	 * Refunds on a state read from the map, unless that needs the map.
	 * @return whether the refund was made
	 */
	boolean refundIfHeld(List<LimitSpec> limits, long now, long cost) {
		while (true) {
			Snapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (!current.straight(limits, time)) {
				return false;
			}
			if (store(current, refund(current, limits, time, cost))) {
				return true;
			}
		}
	}

	/**
	 * Refunds inside the map's compute; see {@link #decideAndHold}.
	 */
	void refundAndHold(List<LimitSpec> limits, long now, long cost) {
		while (true) {
			Snapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (store(current, hold(refund(current, limits, time, cost), limits, time))) {
				return;
			}
		}
	}

	/**
	 * Reports on a state read from the map.
	 * @return the state, or {@code null} when the caller must look inside the map's
	 * compute instead
	 */
	@Nullable Decision peekIfHeld(List<LimitSpec> limits, long now) {
		while (true) {
			Snapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (!current.straight(limits, time)) {
				return null;
			}
			Change change = peek(current, limits, time);
			if (store(current, change.next)) {
				return change.decision;
			}
		}
	}

	/**
	 * Reports inside the map's compute; see {@link #decideAndHold}.
	 */
	Decision peekAndHold(List<LimitSpec> limits, long now) {
		while (true) {
			Snapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			Change change = peek(current, limits, time);
			if (store(current, hold(change.next, limits, time))) {
				return change.decision;
			}
		}
	}

	/**
	 * Makes the states of {@code limits} fresh inside the map's compute, and only those:
	 * states of other limits (set aside after a change) stay, as their keys stay in
	 * Redis.
	 */
	void resetAndHold(List<LimitSpec> limits, long now) {
		while (true) {
			Snapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			Fitted fitted = Fitted.of(current, limits, time);
			LimitState[] states = new LimitState[limits.size()];
			for (int i = 0; i < states.length; i++) {
				states[i] = LimitState.fresh(limits.get(i));
			}
			Snapshot reset = current.with(states, fitted.parked, time, List.of());
			if (store(current, hold(reset, limits, time))) {
				return;
			}
		}
	}

	/**
	 * Marks the state as no longer held by the map. Called under the map's lock for the
	 * entry, as the map lets go of it.
	 */
	void retire() {
		while (true) {
			Snapshot current = this.snapshot;
			if (current.retired || store(current, current.retired())) {
				return;
			}
		}
	}

	boolean isRetired() {
		return this.snapshot.retired;
	}

	/**
	 * Returns how long from {@code currentTimeNanos} the map must hold this state.
	 * @param currentTimeNanos the map's clock: the store's clock in nanoseconds
	 * @return the duration in nanoseconds
	 */
	long nanosHeldAfter(long currentTimeNanos) {
		long micros = this.snapshot.heldUntilMicros - currentTimeNanos / 1000L;
		return (micros <= 0) ? 0 : micros * 1000L;
	}

	private boolean store(Snapshot current, Snapshot next) {
		return next == current || SNAPSHOT.compareAndSet(this, current, next);
	}

	/**
	 * Decides on every limit at once: all-or-nothing, as every limit's next state is
	 * stored only when all of them allow.
	 */
	private static Change decide(Snapshot current, List<LimitSpec> limits, long time, long cost, long maxDelayMicros) {
		Fitted fitted = Fitted.of(current, limits, time);
		LimitState[] states = fitted.states;
		if (states.length == 1) {
			Transition transition = states[0].acquire(limits.get(0), time, cost, maxDelayMicros);
			return new Change(current.with(fitted, transition.next(), time), transition.decision());
		}
		Transition[] transitions = new Transition[states.length];
		List<Decision> decisions = new ArrayList<>(states.length);
		boolean allowed = true;
		for (int i = 0; i < states.length; i++) {
			transitions[i] = states[i].acquire(limits.get(i), time, cost, maxDelayMicros);
			decisions.add(transitions[i].decision());
			allowed &= transitions[i].decision().allowed();
		}
		LimitState[] next = new LimitState[states.length];
		for (int i = 0; i < next.length; i++) {
			next[i] = allowed ? transitions[i].next() : transitions[i].kept();
		}
		return new Change(current.with(next, fitted.parked, time, fitted.heldFor), Decision.combine(decisions));
	}

	private static Snapshot refund(Snapshot current, List<LimitSpec> limits, long time, long cost) {
		Fitted fitted = Fitted.of(current, limits, time);
		LimitState[] next = new LimitState[fitted.states.length];
		for (int i = 0; i < next.length; i++) {
			next[i] = fitted.states[i].refund(limits.get(i), time, cost);
		}
		return current.with(next, fitted.parked, time, fitted.heldFor);
	}

	private static Change peek(Snapshot current, List<LimitSpec> limits, long time) {
		Fitted fitted = Fitted.of(current, limits, time);
		LimitState[] next = new LimitState[fitted.states.length];
		List<Decision> decisions = new ArrayList<>(next.length);
		for (int i = 0; i < next.length; i++) {
			Transition transition = fitted.states[i].peek(limits.get(i), time);
			next[i] = transition.kept();
			decisions.add(transition.decision());
		}
		Decision decision = (next.length == 1) ? decisions.get(0) : Decision.combine(decisions);
		return new Change(current.with(next, fitted.parked, time, fitted.heldFor), decision);
	}

	/**
	 * Holds the state long enough for any decision within the slack to stay inside the
	 * hold, or retires it when it is as good as fresh.
	 */
	private static Snapshot hold(Snapshot next, List<LimitSpec> limits, long time) {
		long expiresAt = Long.MIN_VALUE;
		for (LimitState state : next.states()) {
			expiresAt = Math.max(expiresAt, state.expiresAtMicros());
		}
		for (Parked p : next.parked) {
			expiresAt = Math.max(expiresAt, p.state.expiresAtMicros());
		}
		if (expiresAt <= time) {
			return next.retired();
		}
		long lifetime = lifetimeMicros(limits);
		List<Parked> parked = next.parked;
		if (!parked.isEmpty()) {
			parked = new ArrayList<>(parked);
			parked.removeIf((p) -> p.state.expiresAtMicros() <= time);
			for (Parked p : parked) {
				lifetime = Math.max(lifetime, p.state.expiresAtMicros() - time);
			}
			parked = List.copyOf(parked);
		}
		long slack = Math.min(lifetime, MAX_SLACK_MICROS);
		long heldUntil = time + Math.min(lifetime + slack, MAX_HOLD_MICROS);
		return Snapshot.of(next.states(), parked, next.lastNow, heldUntil, limits, heldUntil - lifetime, false);
	}

	private static long lifetimeMicros(List<LimitSpec> limits) {
		long lifetime = 0;
		for (int i = 0; i < limits.size(); i++) {
			lifetime = Math.max(lifetime, LimitState.lifetimeMicros(limits.get(i)));
		}
		return lifetime;
	}

	/**
	 * Everything a key holds, never changed once built.
	 */
	private static final class Snapshot {

		static final Snapshot EMPTY = of(new LimitState[0], List.of(), Long.MIN_VALUE, Long.MIN_VALUE, List.of(),
				Long.MIN_VALUE, false);

		private static final LimitState[] NONE = new LimitState[0];

		/**
		 * The state of the first limit; {@code null} while there is none. Apart from
		 * {@link #others} so that a decision on one limit stores no array.
		 */
		final @Nullable LimitState first;

		/** The states of the other limits, in their order; never written once built. */
		final LimitState[] others;

		/**
		 * States of earlier limits at a position, kept until they are fresh again: a
		 * limit whose algorithm, window or segments changed is a state of its own, as it
		 * is a key of its own in Redis, and comes back if the limit changes back in its
		 * lifetime. Almost always empty.
		 */
		final List<Parked> parked;

		/** The latest time seen, so the clock never goes backwards for this key. */
		final long lastNow;

		/** Until when the map holds this state; meaningful once the map has it. */
		final long heldUntilMicros;

		/**
		 * The limits the hold was last taken for, the states fitted to them; compared by
		 * identity: callers keep one immutable list per bucket.
		 */
		final List<LimitSpec> heldFor;

		/**
		 * The latest time at which a decision under {@link #heldFor} still fits in the
		 * hold; saves working out their lifetime per decision.
		 */
		final long straightUntilMicros;

		final boolean retired;

		private Snapshot(@Nullable LimitState first, LimitState[] others, List<Parked> parked, long lastNow,
				long heldUntilMicros, List<LimitSpec> heldFor, long straightUntilMicros, boolean retired) {
			this.first = first;
			this.others = others;
			this.parked = parked;
			this.lastNow = lastNow;
			this.heldUntilMicros = heldUntilMicros;
			this.heldFor = heldFor;
			this.straightUntilMicros = straightUntilMicros;
			this.retired = retired;
		}

		static Snapshot of(LimitState[] states, List<Parked> parked, long lastNow, long heldUntilMicros,
				List<LimitSpec> heldFor, long straightUntilMicros, boolean retired) {
			LimitState first = (states.length > 0) ? states[0] : null;
			LimitState[] others = (states.length > 1) ? Arrays.copyOfRange(states, 1, states.length) : NONE;
			return new Snapshot(first, others, parked, lastNow, heldUntilMicros, heldFor, straightUntilMicros, retired);
		}

		/** The states of the limits, in their order: a new array. */
		LimitState[] states() {
			LimitState first = this.first;
			if (first == null) {
				return NONE;
			}
			LimitState[] states = new LimitState[1 + this.others.length];
			states[0] = first;
			System.arraycopy(this.others, 0, states, 1, this.others.length);
			return states;
		}

		/**
		 * Whether an operation at {@code time} may run straight on this snapshot, without
		 * the map.
		 */
		boolean straight(List<LimitSpec> limits, long time) {
			if (this.retired) {
				return false;
			}
			if (limits == this.heldFor) {
				return time <= this.straightUntilMicros;
			}
			return time <= this.heldUntilMicros - lifetimeMicros(limits);
		}

		/** This snapshot with its one state replaced, at {@code time}. */
		Snapshot with(LimitState state, long time) {
			return new Snapshot(state, NONE, this.parked, time, this.heldUntilMicros, this.heldFor,
					this.straightUntilMicros, false);
		}

		/** This snapshot with one fitted state replaced, at {@code time}. */
		Snapshot with(Fitted fitted, LimitState state, long time) {
			if (!fitted.refitted && state == this.first && time == this.lastNow) {
				return this;
			}
			return with(new LimitState[] { state }, fitted.parked, time, fitted.heldFor);
		}

		Snapshot with(LimitState[] states, List<Parked> parked, long time, List<LimitSpec> heldFor) {
			return of(states, parked, time, this.heldUntilMicros, heldFor, this.straightUntilMicros, this.retired);
		}

		Snapshot retired() {
			return new Snapshot(this.first, this.others, this.parked, this.lastNow, this.heldUntilMicros, this.heldFor,
					this.straightUntilMicros, true);
		}

	}

	/**
	 * The states of a snapshot fitted to some limits: a state that does not fit its limit
	 * is parked, and one parked for it earlier, or a fresh one, takes its place.
	 */
	private static final class Fitted {

		final LimitState[] states;

		final List<Parked> parked;

		/** The snapshot's {@code heldFor}, or none once any state was replaced. */
		final List<LimitSpec> heldFor;

		/** Whether any state was replaced. */
		final boolean refitted;

		private Fitted(LimitState[] states, List<Parked> parked, List<LimitSpec> heldFor, boolean refitted) {
			this.states = states;
			this.parked = parked;
			this.heldFor = heldFor;
			this.refitted = refitted;
		}

		static Fitted of(Snapshot snapshot, List<LimitSpec> limits, long time) {
			LimitState[] states = snapshot.states();
			if (limits == snapshot.heldFor) {
				// Fitted to these limits when the hold was taken.
				return new Fitted(states, snapshot.parked, snapshot.heldFor, false);
			}
			boolean fits = states.length == limits.size();
			for (int i = 0; i < states.length && fits; i++) {
				fits = states[i].fits(limits.get(i));
			}
			if (fits) {
				return new Fitted(states, snapshot.parked, snapshot.heldFor, false);
			}
			List<Parked> parked = new ArrayList<>(snapshot.parked);
			LimitState[] fitted = new LimitState[limits.size()];
			for (int i = 0; i < fitted.length; i++) {
				LimitSpec spec = limits.get(i);
				LimitState previous = (i < states.length) ? states[i] : null;
				if (previous != null && previous.fits(spec)) {
					fitted[i] = previous;
					continue;
				}
				fitted[i] = unpark(parked, i, spec);
				if (previous != null) {
					park(parked, i, previous, time);
				}
			}
			for (int i = fitted.length; i < states.length; i++) {
				park(parked, i, states[i], time);
			}
			return new Fitted(fitted, List.copyOf(parked), List.of(), true);
		}

		private static void park(List<Parked> parked, int index, LimitState state, long time) {
			if (state.expiresAtMicros() > time) {
				parked.add(new Parked(index, state));
			}
		}

		private static LimitState unpark(List<Parked> parked, int index, LimitSpec spec) {
			for (int i = 0; i < parked.size(); i++) {
				Parked p = parked.get(i);
				if (p.index == index && p.state.fits(spec)) {
					parked.remove(i);
					return p.state;
				}
			}
			return LimitState.fresh(spec);
		}

	}

	/**
	 * A state set aside at its position in the limits.
	 */
	private record Parked(int index, LimitState state) {
	}

	/**
	 * What an operation leaves: the next snapshot (the same one when nothing changed) and
	 * its decision.
	 */
	private record Change(Snapshot next, Decision decision) {
	}

}
