package io.github.ratelimit.algorithm;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The algorithms' pure functions, straight, over limits, windows, times and costs to the
 * extremes the spec accepts: what every store then only has to load, save and expire. The
 * store contract suite tests the same semantics through each store; these properties try
 * far more values, in memory, in a fraction of the time.
 */
class LimitStatePropertiesTests {

	private static final long NO_MAX_DELAY = Long.MAX_VALUE;

	/** Times up to about 35 years after the epoch, in microseconds. */
	private static final long LATEST_NOW = 1L << 50;

	@Property(tries = 2000)
	void aFreshLimitAdmitsItsCapacityAtOnceAndThenNothing(@ForAll("specs") LimitSpec spec,
			@ForAll @LongRange(min = 0, max = LATEST_NOW) long now) {
		LimitState fresh = LimitState.fresh(spec);
		Transition all = fresh.acquire(spec, now, spec.capacity(), NO_MAX_DELAY);
		assertThat(all.decision().allowed()).as("%s: its capacity at once", spec).isTrue();
		assertThat(all.decision().remaining()).isZero();
		Transition more = all.next().acquire(spec, now, 1, NO_MAX_DELAY);
		assertThat(more.decision().allowed()).as("%s: one more at the same time", spec).isFalse();
		assertThat(more.kept()).as("a rejection keeps the state").isEqualTo(more.next());
	}

	@Property(tries = 2000)
	void aClientThatWaitsItsRetryAfterIsAllowed(@ForAll("specs") LimitSpec spec,
			@ForAll @LongRange(min = 0, max = LATEST_NOW) long now,
			@ForAll @LongRange(min = 1, max = 1_000_000) long costSeed) {
		long cost = 1 + Math.floorMod(costSeed - 1, spec.capacity());
		LimitState full = LimitState.fresh(spec).acquire(spec, now, spec.capacity(), NO_MAX_DELAY).next();
		Decision rejected = full.acquire(spec, now, cost, NO_MAX_DELAY).decision();
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.retryable()).as("%s: a cost within the capacity can be waited for", spec).isTrue();
		long later = now + rejected.retryAfterMicros();
		Decision retried = full.acquire(spec, later, cost, NO_MAX_DELAY).decision();
		assertThat(retried.allowed()).as("%s: cost %d again after %d µs", spec, cost, rejected.retryAfterMicros())
			.isTrue();
	}

	@Property(tries = 2000)
	void aRefundGivesThePermitsBack(@ForAll("specs") LimitSpec spec,
			@ForAll @LongRange(min = 0, max = LATEST_NOW) long now,
			@ForAll @LongRange(min = 1, max = 1_000_000) long costSeed) {
		if (spec.algorithm() == Algorithm.LEAKY_BUCKET) {
			// A slot taken is a place in the queue, never given back.
			return;
		}
		long cost = 1 + Math.floorMod(costSeed - 1, spec.capacity());
		LimitState taken = LimitState.fresh(spec).acquire(spec, now, cost, NO_MAX_DELAY).next();
		LimitState refunded = taken.refund(spec, now, cost);
		Transition all = refunded.acquire(spec, now, spec.capacity(), NO_MAX_DELAY);
		assertThat(all.decision().allowed()).as("%s: the whole capacity after %d taken and given back", spec, cost)
			.isTrue();
	}

	@Property(tries = 2000)
	void aPeekTakesNothing(@ForAll("specs") LimitSpec spec, @ForAll @LongRange(min = 0, max = LATEST_NOW) long now,
			@ForAll @LongRange(min = 1, max = 1_000_000) long costSeed) {
		long cost = 1 + Math.floorMod(costSeed - 1, spec.capacity());
		LimitState state = LimitState.fresh(spec).acquire(spec, now, cost, NO_MAX_DELAY).next();
		LimitState peeked = state.peek(spec, now).kept();
		Decision direct = state.acquire(spec, now, cost, NO_MAX_DELAY).decision();
		Decision afterPeek = peeked.acquire(spec, now, cost, NO_MAX_DELAY).decision();
		assertThat(afterPeek.allowed()).as("%s", spec).isEqualTo(direct.allowed());
		assertThat(afterPeek.remaining()).isEqualTo(direct.remaining());
		assertThat(afterPeek.retryAfterMicros()).isEqualTo(direct.retryAfterMicros());
	}

	/**
	 * Over a random trace of requests, what is admitted never exceeds what the algorithm
	 * allows: a sliding log at most the limit in any window, a fixed window at most the
	 * limit in each window, a token bucket and GCRA at most the burst plus the refill
	 * over any interval. Exact, with the arithmetic of whole numbers.
	 */
	@Property(tries = 1000)
	void admissionsNeverExceedWhatTheAlgorithmAllows(@ForAll("exactAlgorithms") Algorithm algorithm,
			@ForAll @LongRange(min = 1, max = 50) long limit,
			@ForAll @LongRange(min = 1, max = 10_000) long windowMillis,
			@ForAll @LongRange(min = 0, max = LATEST_NOW) long start, @ForAll("steps") List<long[]> steps) {
		LimitSpec spec = LimitSpec.of(limit, Duration.ofMillis(windowMillis), algorithm);
		long window = spec.windowMicros();
		LimitState state = LimitState.fresh(spec);
		long now = start;
		List<long[]> admitted = new ArrayList<>();
		for (long[] step : steps) {
			// A step of up to two windows, in fractions of one that rounding finds.
			now += Math.floorMod(step[0], 2 * window + 1);
			long cost = 1 + Math.floorMod(step[1], spec.capacity());
			Transition transition = state.acquire(spec, now, cost, NO_MAX_DELAY);
			state = transition.decision().allowed() ? transition.next() : transition.kept();
			if (transition.decision().allowed()) {
				admitted.add(new long[] { now, cost });
			}
		}
		for (int i = 0; i < admitted.size(); i++) {
			long used = 0;
			for (int j = i; j < admitted.size(); j++) {
				long from = admitted.get(i)[0];
				long to = admitted.get(j)[0];
				used += admitted.get(j)[1];
				switch (algorithm) {
					case SLIDING_LOG -> {
						if (to - from < window) {
							assertThat(used).as("%s: admitted within one window from %d", spec, from)
								.isLessThanOrEqualTo(limit);
						}
					}
					case FIXED_WINDOW -> {
						if (Math.floorDiv(from, window) == Math.floorDiv(to, window)) {
							assertThat(used).as("%s: admitted in the window of %d", spec, from)
								.isLessThanOrEqualTo(limit);
						}
					}
					default -> assertThat(BigInteger.valueOf(used).multiply(BigInteger.valueOf(window)))
						.as("%s: admitted from %d to %d", spec, from, to)
						.isLessThanOrEqualTo(BigInteger.valueOf(spec.capacity())
							.multiply(BigInteger.valueOf(window))
							.add(BigInteger.valueOf(to - from).multiply(BigInteger.valueOf(limit))));
				}
			}
		}
	}

	@Provide
	Arbitrary<Algorithm> exactAlgorithms() {
		return Arbitraries.of(Algorithm.SLIDING_LOG, Algorithm.FIXED_WINDOW, Algorithm.TOKEN_BUCKET, Algorithm.GCRA);
	}

	@Provide
	Arbitrary<List<long[]>> steps() {
		return Arbitraries.longs()
			.between(0, Long.MAX_VALUE)
			.array(long[].class)
			.ofSize(2)
			.list()
			.ofMinSize(1)
			.ofMaxSize(120);
	}

	@Provide
	Arbitrary<LimitSpec> specs() {
		Arbitrary<Algorithm> algorithms = Arbitraries.of(Algorithm.class);
		// Limits from 1 to 2^53 - 1 (a sliding log's up to its own, smaller maximum);
		// small ones more often, where rounding shows.
		Arbitrary<Long> limits = Arbitraries.oneOf(Arbitraries.longs().between(1, 100),
				Arbitraries.longs().between(1, LimitSpec.MAX_LIMIT));
		// Windows from a millisecond to the maximum the spec accepts.
		Arbitrary<Long> windows = Arbitraries.oneOf(Arbitraries.longs().between(1, 60_000),
				Arbitraries.longs().between(1, LimitSpec.MAX_WINDOW.toMillis()));
		return Combinators.combine(algorithms, limits, windows).as((algorithm, limit, window) -> {
			long fitted = (algorithm == Algorithm.SLIDING_LOG) ? 1 + Math.floorMod(limit - 1, 1000) : limit;
			return LimitSpec.builder().algorithm(algorithm).limit(fitted).window(Duration.ofMillis(window)).build();
		}).ignoreException(IllegalArgumentException.class);
	}

}
