package io.github.ratelimit.store.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.algorithm.LimitState;
import io.github.ratelimit.algorithm.Transition;

/**
 * Where the store keeps one {@code (bucket, key)}: its {@link KeySnapshot}, replaced as a
 * whole by compare-and-set. An operation reads the snapshot, computes the next one, and
 * stores it if no other operation stored one meanwhile, or starts over. So no operation
 * takes a lock, and one that changes nothing (a rejection) stores nothing.
 * <p>
 * Operations come two ways: inside the map's {@code compute} for the entry (creating the
 * state, or when the hold must be extended), or straight on a state read from the map,
 * which is what keeps a hot key free of map writes. The second way is safe because the
 * map holds the state until {@link KeySnapshot#heldUntilMicros}, and a straight operation
 * only runs while a decision made now cannot make the state matter past that time
 * ({@link LimitState#lifetimeMicros}). Once the map lets go of the state (expiry,
 * eviction, reset, or a decision that left it fresh) it is {@link #retire() retired},
 * which is a snapshot too: a straight operation that read the one before fails to store
 * its own and, starting over, refuses the state, so no decision is ever made on a state
 * the map no longer holds.
 */
final class KeyState {

	private static final VarHandle SNAPSHOT;

	static {
		try {
			SNAPSHOT = MethodHandles.lookup().findVarHandle(KeyState.class, "snapshot", KeySnapshot.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private volatile KeySnapshot snapshot = KeySnapshot.EMPTY;

	/**
	 * Uses of the key read without telling the map; racy on purpose (a lost count only
	 * moves which use the map is told of).
	 */
	private int uses;

	/**
	 * Counts a use of the key read from the map.
	 * @return the uses counted before this one
	 */
	int countUse() {
		return this.uses++;
	}

	/**
	 * Decides on a state read from the map, unless that needs the map.
	 * @return the decision, or {@code null} when the caller must decide inside the map's
	 * compute instead
	 */
	@Nullable Decision decideIfHeld(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (!current.straight(limits, time)) {
				return null;
			}
			LimitState state = current.first;
			if (limits == current.heldFor() && state != null && current.others.length == 0) {
				// The hot path: one limit, fitted when the hold was taken.
				Transition transition = state.acquire(limits.get(0), time, cost, maxDelayMicros);
				if (transition.next() == state
						|| SNAPSHOT.compareAndSet(this, current, current.with(transition.next(), time))) {
					return transition.decision();
				}
				continue;
			}
			KeySnapshot.Change change = current.decide(limits, time, cost, maxDelayMicros);
			if (store(current, change.next())) {
				return change.decision();
			}
		}
	}

	/**
	 * Decides inside the map's compute and extends the hold, or retires the state when
	 * the decision left it fresh.
	 */
	Decision decideAndHold(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			KeySnapshot.Change change = current.decide(limits, time, cost, maxDelayMicros);
			if (store(current, change.next().hold(limits, time))) {
				return change.decision();
			}
		}
	}

	/**
	 * Refunds on a state read from the map, unless that needs the map.
	 * @return whether the refund was made
	 */
	boolean refundIfHeld(List<LimitSpec> limits, long now, long cost) {
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (!current.straight(limits, time)) {
				return false;
			}
			if (store(current, current.refund(limits, time, cost))) {
				return true;
			}
		}
	}

	/**
	 * Refunds inside the map's compute; see {@link #decideAndHold}.
	 */
	void refundAndHold(List<LimitSpec> limits, long now, long cost) {
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (store(current, current.refund(limits, time, cost).hold(limits, time))) {
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
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (!current.straight(limits, time)) {
				return null;
			}
			KeySnapshot.Change change = current.peek(limits, time);
			if (store(current, change.next())) {
				return change.decision();
			}
		}
	}

	/**
	 * Reports inside the map's compute; see {@link #decideAndHold}.
	 */
	Decision peekAndHold(List<LimitSpec> limits, long now) {
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			KeySnapshot.Change change = current.peek(limits, time);
			if (store(current, change.next().hold(limits, time))) {
				return change.decision();
			}
		}
	}

	/**
	 * Makes the states of {@code limits} fresh inside the map's compute; see
	 * {@link KeySnapshot#reset}.
	 */
	void resetAndHold(List<LimitSpec> limits, long now) {
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (store(current, current.reset(limits, time).hold(limits, time))) {
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
			KeySnapshot current = this.snapshot;
			if (current.isRetired() || store(current, current.retired())) {
				return;
			}
		}
	}

	boolean isRetired() {
		return this.snapshot.isRetired();
	}

	/**
	 * Returns how long from {@code currentTimeNanos} the map must hold this state.
	 * @param currentTimeNanos the map's clock: the store's clock in nanoseconds
	 * @return the duration in nanoseconds
	 */
	long nanosHeldAfter(long currentTimeNanos) {
		long micros = this.snapshot.heldUntilMicros() - currentTimeNanos / 1000L;
		return (micros <= 0) ? 0 : micros * 1000L;
	}

	private boolean store(KeySnapshot current, KeySnapshot next) {
		return next == current || SNAPSHOT.compareAndSet(this, current, next);
	}

}
