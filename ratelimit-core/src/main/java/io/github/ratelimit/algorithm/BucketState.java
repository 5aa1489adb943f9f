package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#TOKEN_BUCKET}, {@link Algorithm#GCRA} and
 * {@link Algorithm#LEAKY_BUCKET}: one function over one time, the time at which the
 * bucket is full again ({@code fullAt}; GCRA's theoretical arrival time, the time the
 * leaky bucket's queue drains). The backlog {@code fullAt - t} is the credit taken and
 * not yet restored; a request of cost {@code c} adds {@code c * T} to it
 * ({@code T = W / L}, the emission interval) and is allowed while the backlog stays
 * within the capacity {@code B * T}. Shaping (leaky bucket) differs only in making the
 * caller wait for its slot (the delay is the backlog), bounding that wait, and in
 * refusing refunds: a slot once handed out is already being waited for.
 * <p>
 * Exact for every spec: {@code T} is rarely a whole number of microseconds (3 per second,
 * 7 per hour, 7e8 per second), and a rounded {@code T} refills too fast or too slowly, by
 * up to a whole burst's worth at large limits. So every time here is whole microseconds
 * plus a fraction counted in {@code 1/L} µs ({@code T = q + r/L}:
 * {@link LimitSpec#emissionIntervalMicros()} and
 * {@link LimitSpec#emissionIntervalRemainder()}), which add and compare exactly, and a
 * product of a count and a time is taken exactly ({@link MulDiv}). When {@code L} divides
 * {@code W}, every fraction is 0 and no product is.
 * <p>
 * The backlog is read under the current spec and cut to its capacity, so a change of
 * limit, window or burst keeps the time the bucket needs to refill, up to the new
 * capacity; a fraction counted in another limit's {@code 1/L} µs is rounded up to the
 * next microsecond. The Redis script (bucket.lua) keeps the same time.
 * <p>
 * A state whose time has a fraction is a {@link Fractional}: the state of a bucket whose
 * limit divides its window, the common case, is as small as a whole time allows (it is
 * allocated on every allowed decision).
 */
sealed class BucketState extends LimitState permits BucketState.Fractional {

	private static final BucketState FRESH_TOKEN_BUCKET = new BucketState(Algorithm.TOKEN_BUCKET, Long.MIN_VALUE);

	private static final BucketState FRESH_GCRA = new BucketState(Algorithm.GCRA, Long.MIN_VALUE);

	private static final BucketState FRESH_LEAKY_BUCKET = new BucketState(Algorithm.LEAKY_BUCKET, Long.MIN_VALUE);

	private final Algorithm algorithm;

	/**
	 * When the bucket is full again, in whole microseconds; {@link Long#MIN_VALUE} when
	 * fresh.
	 */
	private final long fullAt;

	private BucketState(Algorithm algorithm, long fullAt) {
		this.algorithm = algorithm;
		this.fullAt = fullAt;
	}

	/** The state full again at {@code fullAt + fraction / limit} µs. */
	private static BucketState of(Algorithm algorithm, long fullAt, long fraction, long limit) {
		return (fraction == 0) ? new BucketState(algorithm, fullAt)
				: new Fractional(algorithm, fullAt, fraction, limit);
	}

	static BucketState fresh(Algorithm algorithm) {
		switch (algorithm) {
			case GCRA:
				return FRESH_GCRA;
			case LEAKY_BUCKET:
				return FRESH_LEAKY_BUCKET;
			default:
				return FRESH_TOKEN_BUCKET;
		}
	}

	@Override
	Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		boolean shaping = this.algorithm == Algorithm.LEAKY_BUCKET;
		long burst = spec.burst();
		long limit = spec.limit();
		long whole = spec.emissionIntervalMicros();
		long remainder = spec.emissionIntervalRemainder();
		long capacity = burst * whole;
		long capacityFraction = 0;
		if (remainder > 0) {
			long share = MulDiv.quotient(burst, remainder, limit);
			capacity += share;
			capacityFraction = MulDiv.remainder(burst, remainder, limit, share);
		}
		long backlog = backlog(limit, now);
		long backlogFraction = backlogFraction(limit, now);
		BucketState kept = this;
		if (backlog > capacity || (backlog == capacity && backlogFraction > capacityFraction)) {
			// Taken under a larger capacity (the spec changed): cut to this one and kept
			// so, or a retry-after computed from the cut backlog would not come true.
			backlog = capacity;
			backlogFraction = capacityFraction;
			kept = of(this.algorithm, now + capacity, capacityFraction, limit);
		}
		long spare = capacity - backlog;
		long spareFraction = capacityFraction - backlogFraction;
		if (spareFraction < 0) {
			spare--;
			spareFraction += limit;
		}
		// T is whole microseconds when the limit divides the window: the fraction, below
		// one, adds no permit.
		long available = (remainder > 0) ? permitsIn(spec, spare, spareFraction) : spare / whole;
		long resetNow = ceil(backlog, backlogFraction);
		boolean delayAccepted = !shaping || resetNow <= maxDelayMicros;
		// The backlog once the permits are taken (a cost above the burst never is).
		long after = 0;
		long afterFraction = 0;
		if (cost <= burst) {
			long credit = cost * whole;
			long creditFraction = 0;
			if (remainder > 0) {
				long share = MulDiv.quotient(cost, remainder, limit);
				credit += share;
				creditFraction = MulDiv.remainder(cost, remainder, limit, share);
			}
			// The fractions add up to less than 2 * limit, which in Lua may pass 2^53 and
			// be rounded: the carry is found without forming the sum.
			if (creditFraction >= limit - backlogFraction) {
				after = backlog + credit + 1;
				afterFraction = creditFraction - (limit - backlogFraction);
			}
			else {
				after = backlog + credit;
				afterFraction = backlogFraction + creditFraction;
			}
		}
		if (cost <= available && delayAccepted) {
			Decision allowed = Decision.allowed(spec, available - cost, ceil(after, afterFraction),
					shaping ? resetNow : 0);
			return new Transition(allowed, of(this.algorithm, now + after, afterFraction, limit), kept);
		}
		long retryAfter = Decision.NEVER;
		if (cost <= burst) {
			// The wait until the backlog with the permits taken fits the capacity.
			long excess = after - capacity;
			long excessFraction = afterFraction - capacityFraction;
			if (excessFraction < 0) {
				excess--;
				excessFraction += limit;
			}
			retryAfter = Math.max(0, ceil(excess, excessFraction));
			if (shaping) {
				// The wait until the delay is short enough, without multiplying
				// maxDelayMicros, which may be as large as a long.
				retryAfter = Math.max(retryAfter, resetNow - maxDelayMicros);
			}
		}
		return Transition.rejected(Decision.rejected(spec, available, resetNow, retryAfter), kept);
	}

	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		if (this.algorithm == Algorithm.LEAKY_BUCKET) {
			return this;
		}
		long limit = spec.limit();
		long capacity = span(spec, spec.burst());
		long capacityFraction = spanFraction(spec, spec.burst());
		long backlog = backlog(limit, now);
		long backlogFraction = backlogFraction(limit, now);
		if (backlog == 0 && backlogFraction == 0) {
			return this;
		}
		if (backlog > capacity || (backlog == capacity && backlogFraction > capacityFraction)) {
			backlog = capacity;
			backlogFraction = capacityFraction;
		}
		long after = 0;
		long afterFraction = 0;
		if (cost < spec.burst()) {
			long given = span(spec, cost);
			long givenFraction = spanFraction(spec, cost);
			after = backlog - given;
			afterFraction = backlogFraction - givenFraction;
			if (afterFraction < 0) {
				after--;
				afterFraction += limit;
			}
			if (after < 0) {
				after = 0;
				afterFraction = 0;
			}
		}
		return of(this.algorithm, now + after, afterFraction, limit);
	}

	@Override
	long available(LimitSpec spec, long now) {
		long limit = spec.limit();
		long spare = span(spec, spec.burst()) - backlog(limit, now);
		long spareFraction = spanFraction(spec, spec.burst()) - backlogFraction(limit, now);
		if (spareFraction < 0) {
			spare--;
			spareFraction += limit;
		}
		return (spare < 0) ? 0 : permitsIn(spec, spare, spareFraction);
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		return Math.min(refillMicros(spec), ceil(backlog(spec.limit(), now), backlogFraction(spec.limit(), now)));
	}

	@Override
	public long expiresAtMicros() {
		return this.fullAt;
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return spec.algorithm() == this.algorithm;
	}

	/**
	 * The whole microseconds of the backlog at {@code now}: the credit taken and not yet
	 * restored, read under {@code limit}.
	 */
	private long backlog(long limit, long now) {
		return (this.fullAt == Long.MIN_VALUE) ? 0 : Math.max(0, fullAtUnder(limit) - now);
	}

	/** The backlog's fraction at {@code now}, in {@code 1/limit} µs. */
	private long backlogFraction(long limit, long now) {
		return (this.fullAt == Long.MIN_VALUE || fullAtUnder(limit) < now) ? 0 : fractionUnder(limit);
	}

	/**
	 * The whole microseconds of the time the bucket is full again, read under
	 * {@code limit}.
	 */
	long fullAtUnder(long limit) {
		return this.fullAt;
	}

	/** The fraction of the time the bucket is full again, read under {@code limit}. */
	long fractionUnder(long limit) {
		return 0;
	}

	/**
	 * Returns how long the bucket of {@code spec} takes to refill from empty:
	 * {@code B * W / L}, rounded up to a whole microsecond.
	 * @param spec a spec of token bucket, GCRA or leaky bucket
	 * @return the refill time in microseconds
	 */
	static long refillMicros(LimitSpec spec) {
		return ceil(span(spec, spec.burst()), spanFraction(spec, spec.burst()));
	}

	/**
	 * The whole microseconds of {@code permits * T}, the time the permits take to come
	 * back.
	 */
	private static long span(LimitSpec spec, long permits) {
		long whole = permits * spec.emissionIntervalMicros();
		long remainder = spec.emissionIntervalRemainder();
		return (remainder == 0) ? whole : whole + MulDiv.quotient(permits, remainder, spec.limit());
	}

	/** The rest of {@code permits * T} below whole microseconds, in {@code 1/L} µs. */
	private static long spanFraction(LimitSpec spec, long permits) {
		long remainder = spec.emissionIntervalRemainder();
		return (remainder == 0) ? 0 : MulDiv.remainder(permits, remainder, spec.limit());
	}

	/**
	 * The permits that come back in {@code micros + fraction / L} µs:
	 * {@code floor((micros * L + fraction) / W)}. When {@code L} divides {@code W} that
	 * is {@code micros / T}, whatever the fraction (below one microsecond).
	 */
	private static long permitsIn(LimitSpec spec, long micros, long fraction) {
		if (spec.emissionIntervalRemainder() == 0) {
			return micros / spec.emissionIntervalMicros();
		}
		long window = spec.windowMicros();
		long quotient = MulDiv.quotient(micros, spec.limit(), window);
		long rest = MulDiv.remainder(micros, spec.limit(), window, quotient);
		if (fraction < window) {
			// Both below the window: their sum holds one window at most, found without
			// forming it (or dividing).
			return (rest >= window - fraction) ? quotient + 1 : quotient;
		}
		// rest + fraction may pass 2^53, where Lua would round it: the fraction's whole
		// windows are counted apart.
		return quotient + fraction / window + (rest + fraction % window) / window;
	}

	/** A time of whole microseconds and a fraction, rounded up to whole microseconds. */
	private static long ceil(long micros, long fraction) {
		return (fraction > 0) ? micros + 1 : micros;
	}

	/**
	 * A state full again at a fraction of a microsecond past {@code fullAt}: counted in
	 * {@code 1/limit} µs, and rounded up to the next microsecond when read under another
	 * limit.
	 */
	static final class Fractional extends BucketState {

		/** From 1 to {@code limit - 1}. */
		private final long fraction;

		/** The limit in whose {@code 1/L} µs the fraction is counted. */
		private final long limit;

		private Fractional(Algorithm algorithm, long fullAt, long fraction, long limit) {
			super(algorithm, fullAt);
			this.fraction = fraction;
			this.limit = limit;
		}

		@Override
		long fullAtUnder(long limit) {
			return (this.limit == limit) ? super.fullAtUnder(limit) : super.fullAtUnder(limit) + 1;
		}

		@Override
		long fractionUnder(long limit) {
			return (this.limit == limit) ? this.fraction : 0;
		}

		@Override
		public long expiresAtMicros() {
			return super.expiresAtMicros() + 1;
		}

	}

}
