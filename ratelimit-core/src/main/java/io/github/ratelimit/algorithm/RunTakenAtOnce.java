package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * The decisions of a run of identical requests that one limit allowed at once, after the
 * first of them: the Java twin of the batch closed form of the Redis script (its
 * {@code bucket.lua} and {@code fixed_window.lua}). The script decides such a run in one
 * step and answers the first request's decision, how many it took, the limit's state
 * before them (the base) and what each of them adds to it (the step); this gives each
 * later request the decision a call of its own would have had.
 * <p>
 * Each takes the run's cost more, so has that many fewer permits remaining. A bucket's
 * backlog (whole microseconds and a fraction in {@code 1/L} µs, as {@link BucketState}
 * keeps it) is one step more before each request and one more after it, which is its
 * reset; a leaky bucket's delay is the backlog before it. A fixed window resets at its
 * end for all of them. Exact: the fractions stay below {@code 2L}, far from overflowing a
 * long.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RunTakenAtOnce {

	private final LimitSpec spec;

	private final Decision first;

	private final long cost;

	private final long step;

	private final long stepFraction;

	/** The backlog before the next request: whole microseconds. */
	private long whole;

	/** The backlog before the next request: the fraction, in {@code 1/L} µs. */
	private long fraction;

	/** The requests after the first given so far. */
	private long given;

	/**
	 * Starts the run after its first request.
	 * @param spec the limit that took the run, a bucket algorithm or fixed window
	 * @param first the first request's decision
	 * @param cost each request's cost
	 * @param base the limit's state before the first request: a bucket's backlog in whole
	 * microseconds, a fixed window's count
	 * @param baseFraction the backlog's fraction in {@code 1/L} µs (a bucket's)
	 * @param step what each request adds to the backlog: whole microseconds (a bucket's)
	 * @param stepFraction and its fraction in {@code 1/L} µs
	 * @throws IllegalArgumentException when no run is taken at once by the spec's
	 * algorithm
	 */
	public RunTakenAtOnce(LimitSpec spec, Decision first, long cost, long base, long baseFraction, long step,
			long stepFraction) {
		if (!takesRunsAtOnce(spec.algorithm())) {
			throw new IllegalArgumentException("no run is taken at once by " + spec.algorithm());
		}
		this.spec = spec;
		this.first = first;
		this.cost = cost;
		this.whole = base;
		this.fraction = baseFraction;
		this.step = step;
		this.stepFraction = stepFraction;
		stepBacklog();
	}

	/**
	 * Returns the decision of the next request of the run.
	 * @return the decision, allowed
	 */
	public Decision next() {
		this.given++;
		long remaining = this.first.remaining() - this.given * this.cost;
		if (this.spec.algorithm() == Algorithm.FIXED_WINDOW) {
			return Decision.allowed(this.spec, remaining, this.first.resetAfterMicros(), 0);
		}
		long before = ceil(this.whole, this.fraction);
		stepBacklog();
		long delay = (this.spec.algorithm() == Algorithm.LEAKY_BUCKET) ? before : 0;
		return Decision.allowed(this.spec, remaining, ceil(this.whole, this.fraction), delay);
	}

	private static boolean takesRunsAtOnce(Algorithm algorithm) {
		return algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.GCRA || algorithm == Algorithm.LEAKY_BUCKET
				|| algorithm == Algorithm.FIXED_WINDOW;
	}

	/** Adds one step to the backlog: the backlog after the request it is before. */
	private void stepBacklog() {
		long limit = this.spec.limit();
		boolean carry = this.fraction >= limit - this.stepFraction;
		this.whole += this.step + (carry ? 1 : 0);
		this.fraction = carry ? this.fraction - (limit - this.stepFraction) : this.fraction + this.stepFraction;
	}

	private static long ceil(long micros, long fraction) {
		return (fraction > 0) ? micros + 1 : micros;
	}

}
