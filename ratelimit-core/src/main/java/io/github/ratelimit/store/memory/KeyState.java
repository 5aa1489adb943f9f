package io.github.ratelimit.store.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

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

	/**
	 * After the first lost compare-and-set, up to 2^4 spins; each further loss doubles
	 * that, up to 2^{@value #BACKOFF_LAST_SHIFT}: about 20 µs on a CPU whose spin hint
	 * takes 20 ns. Chosen by JMH, two threads admitting on one key, two cores: bounds of
	 * 2^2 to 2^7 decided 7–9M times a second, 2^4 to 2^8 10M, 2^4 to 2^10 9–13M; no
	 * back-off 3.6M.
	 */
	private static final int BACKOFF_FIRST_SHIFT = 4;

	/** See {@link #BACKOFF_FIRST_SHIFT}. */
	private static final int BACKOFF_LAST_SHIFT = 10;

	/** Uses counted before uses are sampled at random; see {@link #sampleUse}. */
	private static final int COUNTED_USES = 1024;

	private volatile KeySnapshot snapshot = KeySnapshot.EMPTY;

	/**
	 * The first uses of the key read without telling the map, up to
	 * {@link #COUNTED_USES}; racy on purpose (a lost count only moves which use the map
	 * is told of).
	 */
	private int uses;

	/**
	 * Whether this use of the key, read from the map, is one the map should be told of:
	 * one in {@code sample}. The first {@link #COUNTED_USES} are counted, the first one
	 * included, so a new busy key weighs more than a one-off key at once (a random sample
	 * alone sometimes let a flood of one-off keys evict it). Later uses are sampled at
	 * random instead: a count written on every decision is a write that threads deciding
	 * on one key would fight over, when a rejection otherwise writes nothing.
	 * @param sample one in how many uses is told, a power of two
	 * @return whether to tell the map of this use
	 */
	boolean sampleUse(int sample) {
		int counted = this.uses;
		if (counted < COUNTED_USES) {
			this.uses = counted + 1;
			return (counted & (sample - 1)) == 0;
		}
		return (ThreadLocalRandom.current().nextInt() & (sample - 1)) == 0;
	}

	/**
	 * Decides on a state read from the map, unless that needs the map.
	 * @return the decision, or {@code null} when the caller must decide inside the map's
	 * compute instead
	 */
	@Nullable Decision decideIfHeld(List<LimitSpec> limits, long now, long cost, long maxDelayMicros) {
		int losses = 0;
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
				backOff(++losses);
				continue;
			}
			KeySnapshot.Change change = current.decide(limits, time, cost, maxDelayMicros);
			if (store(current, change.next())) {
				return change.decision();
			}
			backOff(++losses);
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
		int losses = 0;
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (!current.straight(limits, time)) {
				return false;
			}
			if (store(current, current.refund(limits, time, cost))) {
				return true;
			}
			backOff(++losses);
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
	 * Charges inside the map's compute; see {@link KeySnapshot#charge}. With
	 * {@code onlyIfFresh}, only when none of the limits has a state.
	 * @return whether the permits were taken
	 */
	boolean chargeAndHold(List<LimitSpec> limits, long now, long[] costs, boolean onlyIfFresh) {
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			if (onlyIfFresh && current.hasStateFor(limits, time)) {
				return false;
			}
			if (store(current, current.charge(limits, time, costs).hold(limits, time))) {
				return true;
			}
		}
	}

	/**
	 * Takes permits inside the map's compute, going into debt for what a limit does not
	 * have; see {@link KeySnapshot#owe}. Always inside the compute: a debt may outlast
	 * the hold, which must then be extended.
	 * @return the most permits a limit owed past what it had left
	 */
	long oweAndHold(List<LimitSpec> limits, long now, long permits) {
		while (true) {
			KeySnapshot current = this.snapshot;
			long time = Math.max(now, current.lastNow);
			long owed = current.owed(limits, time, permits);
			if (store(current, current.owe(limits, time, permits).hold(limits, time))) {
				return owed;
			}
		}
	}

	/**
	 * Reports on a state read from the map.
	 * @return the state, or {@code null} when the caller must look inside the map's
	 * compute instead
	 */
	@Nullable Decision peekIfHeld(List<LimitSpec> limits, long now) {
		int losses = 0;
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
			backOff(++losses);
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

	/**
	 * After a lost compare-and-set, spins a random while that doubles with each loss, so
	 * that threads deciding on one key take turns in runs instead of taking the key's
	 * cache line from each other on every decision: without it, two threads admitting on
	 * one key decided at a quarter of one thread's rate, each decision waiting for the
	 * line to cross between cores. Spins, never parks (as Resilience4j does): decisions
	 * run on event-loop threads too, where a park is a blocking call. Only the operations
	 * on a state read straight from the map back off: the others run inside the map's
	 * compute, holding its lock on the entry, where a spin would hold up every thread
	 * waiting for that lock instead of letting one through.
	 */
	private static void backOff(int losses) {
		int bound = 1 << Math.min(losses + BACKOFF_FIRST_SHIFT - 1, BACKOFF_LAST_SHIFT);
		for (int spins = ThreadLocalRandom.current().nextInt(bound); spins > 0; spins--) {
			Thread.onSpinWait();
		}
	}

	private boolean store(KeySnapshot current, KeySnapshot next) {
		return next == current || SNAPSHOT.compareAndSet(this, current, next);
	}

}
