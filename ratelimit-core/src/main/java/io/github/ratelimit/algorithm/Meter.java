package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * The state of one limit for one key, and the algorithm that decides on it. Stores load a
 * meter, call it under their own per-key lock, and expire it at
 * {@link #expiresAtMicros(LimitSpec)}.
 * <p>
 * A meter is mutable so that deciding allocates nothing but the {@link Decision} (a
 * sliding log of {@code L} permits is not copied per request). {@code commit = false} is
 * a dry run: it may tidy the state (drop expired entries, roll windows) but never changes
 * what later calls decide. Stores use it to check every limit of a call before committing
 * any, which makes multi-limit decisions all-or-nothing.
 * <p>
 * Time is the store's clock in microseconds and must not go backwards for one meter;
 * stores clamp it per key.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public abstract sealed class Meter
		permits FixedWindowMeter, SlidingLogMeter, SlidingWindowMeter, SlidingWindowCounterMeter, BucketMeter {

	/** The window of the spec this meter was created for; see {@link #sameShape}. */
	private final long windowMicros;

	/** The segments of the spec this meter was created for. */
	private final int segments;

	/** The spec this meter was created for: any spec it {@link #fits} reads it alike. */
	private final LimitSpec createdFor;

	Meter(LimitSpec spec) {
		this.windowMicros = shapeWindow(spec);
		this.segments = shapeSegments(spec);
		this.createdFor = spec;
	}

	/**
	 * Returns when this state becomes equal to a fresh one, read under the spec it was
	 * created for; see {@link #expiresAtMicros(LimitSpec)}.
	 * @return the time in microseconds
	 */
	public long expiresAtMicros() {
		return expiresAtMicros(this.createdFor);
	}

	/**
	 * Creates the fresh (full) state of a limit.
	 * @param spec the limit
	 * @return a new meter for the spec's algorithm
	 */
	public static Meter create(LimitSpec spec) {
		switch (spec.algorithm()) {
			case FIXED_WINDOW:
				return new FixedWindowMeter(spec);
			case SLIDING_LOG:
				return new SlidingLogMeter(spec);
			case SLIDING_WINDOW:
				return new SlidingWindowMeter(spec);
			case SLIDING_WINDOW_COUNTER:
				return new SlidingWindowCounterMeter(spec);
			case TOKEN_BUCKET:
			case LEAKY_BUCKET:
			case GCRA:
				return new BucketMeter(spec);
			default:
				throw new IllegalStateException("Unknown algorithm " + spec.algorithm());
		}
	}

	/**
	 * Returns the algorithm this meter implements.
	 * @return the algorithm
	 */
	public abstract Algorithm algorithm();

	/**
	 * Returns whether this meter holds the state of {@code spec}: the same algorithm and
	 * the same {@link #sameShape shape}. A limit or burst change keeps the state and
	 * reads it under the new values; any other change is a state of its own.
	 * @param spec the limit
	 * @return whether the state is the spec's
	 */
	public boolean fits(LimitSpec spec) {
		return spec.algorithm() == algorithm() && shapeWindow(spec) == this.windowMicros
				&& shapeSegments(spec) == this.segments;
	}

	/**
	 * Returns whether two specs keep their state the same way: the same algorithm and,
	 * except for the bucket algorithms (whose one number means the same under any
	 * window), the same window and segments. The Redis store names its keys after the
	 * same shape.
	 * @param a one spec
	 * @param b another spec
	 * @return whether a state of {@code a} is a state of {@code b}
	 */
	public static boolean sameShape(LimitSpec a, LimitSpec b) {
		return a.algorithm() == b.algorithm() && shapeWindow(a) == shapeWindow(b)
				&& shapeSegments(a) == shapeSegments(b);
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
	 * Returns whether a dry run ({@code commit = false}) only reads this meter. A store
	 * may then run it without a lock, next to a writer, provided it validates afterwards
	 * that no write happened meanwhile (a seqlock): the result of a dry run over a state
	 * read halfway through a write is thrown away, and reading alone cannot corrupt it.
	 * @return {@code true} when dry runs never write
	 */
	public boolean isDryRunReadOnly() {
		return false;
	}

	/**
	 * Decides on a request of {@code cost} permits at {@code now}.
	 * @param spec the limit
	 * @param now the time in microseconds
	 * @param cost the permits requested, {@code >= 1}
	 * @param maxDelayMicros the longest shaping delay accepted (leaky bucket only)
	 * @param commit whether to take the permits when allowed
	 * @return the decision
	 */
	public abstract Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit);

	/**
	 * Gives permits back; never above the limit. Leaky bucket ignores refunds.
	 * @param spec the limit
	 * @param now the time in microseconds
	 * @param cost the permits to give back
	 */
	public abstract void refund(LimitSpec spec, long now, long cost);

	/**
	 * Reports the state without consuming: allowed when a request of cost 1 would be,
	 * remaining as the permits available now.
	 * @param spec the limit
	 * @param now the time in microseconds
	 * @return the state as a decision
	 */
	public Decision peek(LimitSpec spec, long now) {
		Decision probe = tryAcquire(spec, now, 1, Long.MAX_VALUE, false);
		if (!probe.allowed()) {
			return probe;
		}
		return Decision.allowed(spec, available(spec, now), resetAfterMicros(spec, now), 0);
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
	 * @param spec the limit
	 * @return the time in microseconds
	 */
	public abstract long expiresAtMicros(LimitSpec spec);

	/**
	 * Returns how long the state of {@code spec} can matter after one decision: a meter
	 * that decides or refunds at {@code t} never reports an
	 * {@link #expiresAtMicros(LimitSpec) expiry} later than {@code t} plus this. Stores
	 * use it to keep a key without rescheduling its expiry on every decision.
	 * @param spec the limit
	 * @return the bound in microseconds
	 */
	public static long lifetimeMicros(LimitSpec spec) {
		switch (spec.algorithm()) {
			case SLIDING_WINDOW:
				// The current window's count still weighs on the whole next window.
				return 2 * spec.windowMicros();
			case TOKEN_BUCKET:
			case GCRA:
			case LEAKY_BUCKET:
				return nanosToMicrosCeil(spec.burst() * spec.emissionIntervalNanos());
			default:
				return spec.windowMicros();
		}
	}

	static long ceilDiv(long x, long y) {
		return -Math.floorDiv(-x, y);
	}

	static long nanosToMicrosCeil(long nanos) {
		return ceilDiv(nanos, 1000L);
	}

}
