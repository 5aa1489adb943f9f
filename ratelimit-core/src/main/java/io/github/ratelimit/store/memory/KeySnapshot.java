package io.github.ratelimit.store.memory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.algorithm.LimitState;
import io.github.ratelimit.algorithm.Transition;

/**
 * Everything one {@code (bucket, key)} holds, never changed once built: the states of its
 * limits, in the order of the limits, states set aside after a limit changed, the latest
 * time seen, and how long the store's map holds the key. Its operations are pure
 * functions returning the next snapshot; {@link KeyState} stores it.
 * <p>
 * A request against several limits is all-or-nothing: every limit's {@link Transition} is
 * computed on the current states, and the next snapshot keeps every limit's next state
 * only when all of them allow, the states as they were otherwise.
 */
final class KeySnapshot {

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

	static final KeySnapshot EMPTY = of(new LimitState[0], List.of(), Long.MIN_VALUE, Long.MIN_VALUE, List.of(),
			Long.MIN_VALUE, false);

	private static final LimitState[] NONE = new LimitState[0];

	/**
	 * The state of the first limit; {@code null} while there is none. Apart from
	 * {@link #others} so that a decision on one limit stores no array.
	 */
	final @Nullable LimitState first;

	/** The states of the other limits, in their order; never written once built. */
	final LimitState[] others;

	/** The latest time seen, so the clock never goes backwards for this key. */
	final long lastNow;

	/**
	 * What changes only when the hold is taken, a limit changes or the state is retired:
	 * apart, so that a decision on a held key copies four fields, not eight.
	 */
	final Hold hold;

	private KeySnapshot(@Nullable LimitState first, LimitState[] others, long lastNow, Hold hold) {
		this.first = first;
		this.others = others;
		this.lastNow = lastNow;
		this.hold = hold;
	}

	static KeySnapshot of(LimitState[] states, List<Parked> parked, long lastNow, long heldUntilMicros,
			List<LimitSpec> heldFor, long straightUntilMicros, boolean retired) {
		return of(states, lastNow, new Hold(parked, heldUntilMicros, heldFor, straightUntilMicros, retired));
	}

	private static KeySnapshot of(LimitState[] states, long lastNow, Hold hold) {
		LimitState first = (states.length > 0) ? states[0] : null;
		LimitState[] others = (states.length > 1) ? Arrays.copyOfRange(states, 1, states.length) : NONE;
		return new KeySnapshot(first, others, lastNow, hold);
	}

	/** The limits the hold was last taken for; see {@link Hold#heldFor}. */
	List<LimitSpec> heldFor() {
		return this.hold.heldFor;
	}

	/** Until when the map holds this state; meaningful once the map has it. */
	long heldUntilMicros() {
		return this.hold.heldUntilMicros;
	}

	boolean isRetired() {
		return this.hold.retired;
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
	 * Whether an operation at {@code time} may run straight on this snapshot, without the
	 * map.
	 */
	boolean straight(List<LimitSpec> limits, long time) {
		Hold hold = this.hold;
		if (hold.retired) {
			return false;
		}
		if (limits == hold.heldFor) {
			return time <= hold.straightUntilMicros;
		}
		return time <= hold.heldUntilMicros - lifetimeMicros(limits);
	}

	/** This snapshot with its one state replaced, at {@code time}. */
	KeySnapshot with(LimitState state, long time) {
		return new KeySnapshot(state, NONE, time, this.hold);
	}

	/** This snapshot with one fitted state replaced, at {@code time}. */
	KeySnapshot with(Fitted fitted, LimitState state, long time) {
		if (!fitted.refitted && state == this.first && time == this.lastNow) {
			return this;
		}
		return with(new LimitState[] { state }, fitted.parked, time, fitted.heldFor);
	}

	KeySnapshot with(LimitState[] states, List<Parked> parked, long time, List<LimitSpec> heldFor) {
		Hold hold = this.hold;
		if (parked != hold.parked || heldFor != hold.heldFor) {
			hold = new Hold(parked, hold.heldUntilMicros, heldFor, hold.straightUntilMicros, hold.retired);
		}
		return of(states, time, hold);
	}

	KeySnapshot retired() {
		Hold hold = this.hold;
		return new KeySnapshot(this.first, this.others, this.lastNow,
				new Hold(hold.parked, hold.heldUntilMicros, hold.heldFor, hold.straightUntilMicros, true));
	}

	/**
	 * Decides on every limit at once: all-or-nothing, as every limit's next state is
	 * stored only when all of them allow.
	 */
	Change decide(List<LimitSpec> limits, long time, long cost, long maxDelayMicros) {
		Fitted fitted = Fitted.of(this, limits, time);
		LimitState[] states = fitted.states;
		if (states.length == 1) {
			Transition transition = states[0].acquire(limits.get(0), time, cost, maxDelayMicros);
			return new Change(with(fitted, transition.next(), time), transition.decision());
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
		return new Change(with(next, fitted.parked, time, fitted.heldFor), Decision.combine(decisions));
	}

	KeySnapshot refund(List<LimitSpec> limits, long time, long cost) {
		Fitted fitted = Fitted.of(this, limits, time);
		LimitState[] next = new LimitState[fitted.states.length];
		for (int i = 0; i < next.length; i++) {
			next[i] = fitted.states[i].refund(limits.get(i), time, cost);
		}
		return with(next, fitted.parked, time, fitted.heldFor);
	}

	/**
	 * Takes {@code costs[i]} permits from limit {@code i}, each limit on its own, as far
	 * as it has them; see {@link LimitState#charge}.
	 */
	KeySnapshot charge(List<LimitSpec> limits, long time, long[] costs) {
		Fitted fitted = Fitted.of(this, limits, time);
		LimitState[] next = new LimitState[fitted.states.length];
		for (int i = 0; i < next.length; i++) {
			next[i] = fitted.states[i].charge(limits.get(i), time, costs[i]);
		}
		return with(next, fitted.parked, time, fitted.heldFor);
	}

	/**
	 * Takes {@code permits} from every limit, each on its own, going into debt for what
	 * it does not have; see {@link LimitState#owe}.
	 */
	KeySnapshot owe(List<LimitSpec> limits, long time, long permits) {
		Fitted fitted = Fitted.of(this, limits, time);
		LimitState[] next = new LimitState[fitted.states.length];
		for (int i = 0; i < next.length; i++) {
			next[i] = fitted.states[i].owe(limits.get(i), time, permits);
		}
		return with(next, fitted.parked, time, fitted.heldFor);
	}

	/**
	 * The most permits a limit would owe past what it has left; see
	 * {@link LimitState#owed}.
	 */
	long owed(List<LimitSpec> limits, long time, long permits) {
		LimitState[] states = Fitted.of(this, limits, time).states;
		long owed = 0;
		for (int i = 0; i < states.length; i++) {
			owed = Math.max(owed, states[i].owed(limits.get(i), time, permits));
		}
		return owed;
	}

	/**
	 * Whether any of {@code limits} has a state that differs from a fresh one at
	 * {@code time}.
	 */
	boolean hasStateFor(List<LimitSpec> limits, long time) {
		for (LimitState state : Fitted.of(this, limits, time).states) {
			if (state.expiresAtMicros() > time) {
				return true;
			}
		}
		return false;
	}

	Change peek(List<LimitSpec> limits, long time) {
		Fitted fitted = Fitted.of(this, limits, time);
		LimitState[] next = new LimitState[fitted.states.length];
		List<Decision> decisions = new ArrayList<>(next.length);
		for (int i = 0; i < next.length; i++) {
			Transition transition = fitted.states[i].peek(limits.get(i), time);
			next[i] = transition.kept();
			decisions.add(transition.decision());
		}
		Decision decision = (next.length == 1) ? decisions.get(0) : Decision.combine(decisions);
		return new Change(with(next, fitted.parked, time, fitted.heldFor), decision);
	}

	/**
	 * Makes the states of {@code limits} fresh, and only those: states of other limits
	 * (set aside after a change) stay, as their keys stay in Redis.
	 */
	KeySnapshot reset(List<LimitSpec> limits, long time) {
		Fitted fitted = Fitted.of(this, limits, time);
		LimitState[] states = new LimitState[limits.size()];
		for (int i = 0; i < states.length; i++) {
			states[i] = LimitState.fresh(limits.get(i));
		}
		return with(states, fitted.parked, time, List.of());
	}

	/**
	 * Holds the state long enough for any decision within the slack to stay inside the
	 * hold, or retires it when it is as good as fresh.
	 */
	KeySnapshot hold(List<LimitSpec> limits, long time) {
		long expiresAt = Long.MIN_VALUE;
		for (LimitState state : states()) {
			expiresAt = Math.max(expiresAt, state.expiresAtMicros());
		}
		for (Parked p : this.hold.parked) {
			expiresAt = Math.max(expiresAt, p.state.expiresAtMicros());
		}
		if (expiresAt <= time) {
			return retired();
		}
		// A key in debt matters until the debt is paid, which may be longer.
		long lifetime = Math.max(lifetimeMicros(limits), expiresAt - time);
		List<Parked> parked = this.hold.parked;
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
		return of(states(), parked, this.lastNow, heldUntil, limits, heldUntil - lifetime, false);
	}

	static long lifetimeMicros(List<LimitSpec> limits) {
		long lifetime = 0;
		for (int i = 0; i < limits.size(); i++) {
			lifetime = Math.max(lifetime, LimitState.lifetimeMicros(limits.get(i)));
		}
		return lifetime;
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

		static Fitted of(KeySnapshot snapshot, List<LimitSpec> limits, long time) {
			LimitState[] states = snapshot.states();
			Hold hold = snapshot.hold;
			if (limits == hold.heldFor) {
				// Fitted to these limits when the hold was taken.
				return new Fitted(states, hold.parked, hold.heldFor, false);
			}
			boolean fits = states.length == limits.size();
			for (int i = 0; i < states.length && fits; i++) {
				fits = states[i].fits(limits.get(i));
			}
			if (fits) {
				return new Fitted(states, hold.parked, hold.heldFor, false);
			}
			List<Parked> parked = new ArrayList<>(hold.parked);
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
	 * The part of a snapshot that a decision on a held key keeps as it is.
	 */
	static final class Hold {

		/**
		 * States of earlier limits at a position, kept until they are fresh again: a
		 * limit whose algorithm, window or segments changed is a state of its own, as it
		 * is a key of its own in Redis, and comes back if the limit changes back in its
		 * lifetime. Almost always empty.
		 */
		final List<Parked> parked;

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

		Hold(List<Parked> parked, long heldUntilMicros, List<LimitSpec> heldFor, long straightUntilMicros,
				boolean retired) {
			this.parked = parked;
			this.heldUntilMicros = heldUntilMicros;
			this.heldFor = heldFor;
			this.straightUntilMicros = straightUntilMicros;
			this.retired = retired;
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
	record Change(KeySnapshot next, Decision decision) {
	}

}
