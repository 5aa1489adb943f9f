package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * The state of one limit for one key: immutable, and the algorithm's functions on it.
 * Each function is pure: it reads this state, the spec, the time and the request, and
 * returns a new state (or this one) and a decision, changing nothing. Stores load a
 * state, call a function, store what it returns, and drop the state at
 * {@link #expiresAtMicros()}.
 * <p>
 * A request against several limits is all-or-nothing without any dry run: the store
 * computes every limit's {@link Transition} on the current states, stores every
 * {@link Transition#next() next} state when all are allowed, and every
 * {@link Transition#kept() kept} state otherwise.
 * <p>
 * Time is the store's clock in microseconds and must not go backwards for one state;
 * stores clamp it per key. Each algorithm has a twin in the Redis store's Lua scripts
 * (bucket.lua, fixed_window.lua, sliding_log.lua, sliding_window.lua,
 * sliding_window_counter.lua), which reads line for line like it.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public abstract sealed class LimitState permits BucketState, FixedWindowState, SlidingLogState, SlidingWindowState,
		SlidingWindowCounterState, PenaltyState, DebtState {

	LimitState() {
	}

	/**
	 * Returns the fresh (full) state of a limit.
	 * @param spec the limit
	 * @return the state for the spec's algorithm
	 */
	public static LimitState fresh(LimitSpec spec) {
		switch (spec.algorithm()) {
			case FIXED_WINDOW:
				return FixedWindowState.of(spec);
			case SLIDING_LOG:
				return SlidingLogState.fresh(spec.windowMicros());
			case SLIDING_WINDOW:
				return new SlidingWindowState(spec.windowMicros(), Long.MIN_VALUE, 0, 0);
			case SLIDING_WINDOW_COUNTER:
				return SlidingWindowCounterState.fresh(spec.segmentMicros(), spec.segments());
			case TOKEN_BUCKET:
			case LEAKY_BUCKET:
			case GCRA:
				return BucketState.fresh(spec.algorithm());
			default:
				throw new IllegalStateException("Unknown algorithm " + spec.algorithm());
		}
	}

	/**
	 * Decides on a request of {@code cost} permits at {@code now}: the algorithm's
	 * decision, and when it rejects a request that could be allowed later and the spec
	 * has a {@link LimitSpec#penalty() penalty}, the key blocked for it from now (a key
	 * rejected while blocked or in debt is not blocked again).
	 * @param spec the limit; one this state {@link #fits}
	 * @param now the time in microseconds
	 * @param cost the permits requested, {@code >= 1}
	 * @param maxDelayMicros the longest shaping delay accepted (leaky bucket only)
	 * @return the decision, the state once the permits are taken, and the state if they
	 * are not
	 */
	public final Transition acquire(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		Transition transition = decide(spec, now, cost, maxDelayMicros);
		Decision decision = transition.decision();
		if (spec.penaltyMicros() == 0 || decision.allowed() || decision.retryAfterMicros() == Decision.NEVER
				|| transition.kept() instanceof PenaltyState || transition.kept() instanceof DebtState) {
			return transition;
		}
		return PenaltyState.start(spec, now, transition);
	}

	/**
	 * The algorithm's decision on a request of {@code cost} permits at {@code now},
	 * without the penalty {@link #acquire} adds.
	 * @param spec the limit; one this state {@link #fits}
	 * @param now the time in microseconds
	 * @param cost the permits requested, {@code >= 1}
	 * @param maxDelayMicros the longest shaping delay accepted (leaky bucket only)
	 * @return the decision, the state once the permits are taken, and the state if they
	 * are not
	 */
	abstract Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros);

	/**
	 * Gives permits back; never above the limit. Leaky bucket ignores refunds.
	 * @param spec the limit; one this state {@link #fits}
	 * @param now the time in microseconds
	 * @param cost the permits to give back
	 * @return the state after the refund
	 */
	public abstract LimitState refund(LimitSpec spec, long now, long cost);

	/**
	 * Reports the state without consuming: allowed when a request of cost 1 would be,
	 * remaining as the permits available now. A peek starts no penalty.
	 * @param spec the limit; one this state {@link #fits}
	 * @param now the time in microseconds
	 * @return the report, and the state to keep (its {@link Transition#next()} and
	 * {@link Transition#kept()} are the same)
	 */
	public final Transition peek(LimitSpec spec, long now) {
		Transition probe = decide(spec, now, 1, Long.MAX_VALUE);
		LimitState kept = probe.kept();
		if (!probe.decision().allowed()) {
			return probe;
		}
		Decision report = Decision.allowed(spec, kept.available(spec, now), kept.resetAfterMicros(spec, now), 0);
		return new Transition(report, kept, kept);
	}

	/**
	 * Takes {@code cost} permits whether or not a request of that cost would be allowed:
	 * for permits that were spent without this state knowing (what a per-instance
	 * fallback admitted while the shared store could not be reached). A window algorithm
	 * counts them all, up to a debt of one limit (at most twice the limit used, so that a
	 * charge, a late refund and a late decision add up whatever their order); the bucket
	 * algorithms take as many as are available, as a bucket never owes more than its
	 * capacity (see {@code BucketState}).
	 * @param spec the limit; one this state {@link #fits}
	 * @param now the time in microseconds
	 * @param cost the permits to take, zero or more
	 * @return the state after the charge
	 */
	public LimitState charge(LimitSpec spec, long now, long cost) {
		LimitState kept = peek(spec, now).kept();
		long taken = Math.min(cost, kept.available(spec, now));
		if (taken <= 0) {
			return kept;
		}
		Transition transition = kept.decide(spec, now, taken, Long.MAX_VALUE);
		return transition.decision().allowed() ? transition.next() : kept;
	}

	/**
	 * Takes {@code permits} that were used beyond what was reserved (a settlement of more
	 * than the estimate), even past the limit: what the limit has left now is taken, and
	 * the rest is owed ({@link DebtState}): the key is rejected until the limit is full
	 * again and the permits owed have come back at its rate. Every algorithm alike; a
	 * leaky bucket's slots included.
	 * @param spec the limit; one this state {@link #fits}
	 * @param now the time in microseconds
	 * @param permits the permits to take, zero or more
	 * @return the state after taking them
	 */
	public LimitState owe(LimitSpec spec, long now, long permits) {
		LimitState kept = peek(spec, now).kept();
		long taken = permits - owedPast(kept, spec, now, permits);
		LimitState after = kept;
		if (taken > 0) {
			Transition transition = kept.decide(spec, now, taken, Long.MAX_VALUE);
			if (transition.decision().allowed()) {
				after = transition.next();
			}
			else {
				taken = 0;
			}
		}
		return (permits > taken) ? DebtState.start(spec, now, after, permits - taken) : after;
	}

	/**
	 * Returns how many of {@code permits} {@link #owe} would owe: those beyond what the
	 * limit has left now (all of them while the key is in debt).
	 * @param spec the limit; one this state {@link #fits}
	 * @param now the time in microseconds
	 * @param permits the permits to take, zero or more
	 * @return the permits that would go into debt
	 */
	public long owed(LimitSpec spec, long now, long permits) {
		return owedPast(peek(spec, now).kept(), spec, now, permits);
	}

	private static long owedPast(LimitState kept, LimitSpec spec, long now, long permits) {
		// A window over a lowered limit has less than nothing available.
		return permits - Math.min(permits, Math.max(0, kept.available(spec, now)));
	}

	/**
	 * Returns what a window algorithm has used once {@code cost} more is charged: at most
	 * twice the limit (and the largest exact limit), never less than before.
	 * @param used what the limit has used now
	 * @param cost the permits charged
	 * @param limit the limit
	 * @return the use after the charge
	 */
	static long charged(long used, long cost, long limit) {
		long sum = used + cost;
		long owed = (sum < used) ? Long.MAX_VALUE : sum;
		return Math.max(used, Math.min(owed, Math.min(2 * limit, LimitSpec.MAX_LIMIT)));
	}

	/**
	 * Returns the permits available at {@code now}.
	 * @param spec the limit
	 * @param now the time in microseconds
	 * @return the permits available
	 */
	abstract long available(LimitSpec spec, long now);

	/**
	 * Returns the time from {@code now} until the state is fresh again.
	 * @param spec the limit
	 * @param now the time in microseconds
	 * @return microseconds until the state is fresh, 0 when it is
	 */
	abstract long resetAfterMicros(LimitSpec spec, long now);

	/**
	 * Returns the time at which this state becomes equal to a fresh one, after which a
	 * store may drop it.
	 * @return the time in microseconds; {@link Long#MIN_VALUE} for a fresh state
	 */
	public abstract long expiresAtMicros();

	/**
	 * Returns whether this is a state of {@code spec}: the same algorithm and the same
	 * {@link #sameShape shape}. A limit or burst change keeps the state and reads it
	 * under the new values; any other change is a state of its own.
	 * @param spec the limit
	 * @return whether the state is the spec's
	 */
	public abstract boolean fits(LimitSpec spec);

	/**
	 * Returns whether two specs keep their state the same way: the same algorithm and,
	 * except for the bucket algorithms (whose one number means the same under any
	 * window), the same window and segments, and the same calendar unit and zone. The
	 * Redis store names its keys after the same shape.
	 * @param a one spec
	 * @param b another spec
	 * @return whether a state of {@code a} is a state of {@code b}
	 */
	public static boolean sameShape(LimitSpec a, LimitSpec b) {
		return a.algorithm() == b.algorithm() && shapeWindow(a) == shapeWindow(b)
				&& shapeSegments(a) == shapeSegments(b) && a.calendar() == b.calendar()
				&& (a.calendar() == null || a.zone().equals(b.zone()));
	}

	/**
	 * Returns the window that is part of a state's identity: the window of the window
	 * algorithms, 0 for token bucket, GCRA and leaky bucket.
	 * @param spec the limit
	 * @return the window in microseconds, or 0
	 */
	public static long shapeWindow(LimitSpec spec) {
		return spec.algorithm().usesBurst() ? 0 : spec.windowMicros();
	}

	/**
	 * Returns the segments that are part of a state's identity: those of the sliding
	 * window counter, 0 for every other algorithm.
	 * @param spec the limit
	 * @return the segments, or 0
	 */
	public static int shapeSegments(LimitSpec spec) {
		return (spec.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER) ? spec.segments() : 0;
	}

	/**
	 * Returns how long the state of {@code spec} can matter after one operation: a state
	 * returned by a decision, refund or peek at {@code t} never reports an
	 * {@link #expiresAtMicros() expiry} later than {@code t} plus this. Stores use it to
	 * keep a key without rescheduling its expiry on every decision. A penalty's block
	 * lasts the penalty.
	 * @param spec the limit
	 * @return the bound in microseconds
	 */
	public static long lifetimeMicros(LimitSpec spec) {
		return Math.max(algorithmLifetimeMicros(spec), spec.penaltyMicros());
	}

	private static long algorithmLifetimeMicros(LimitSpec spec) {
		switch (spec.algorithm()) {
			case SLIDING_WINDOW:
				// The current window's count still weighs on the whole next window.
				return 2 * spec.windowMicros();
			case TOKEN_BUCKET:
			case GCRA:
			case LEAKY_BUCKET:
				return BucketState.refillMicros(spec);
			default:
				return spec.windowMicros();
		}
	}

}
