package io.github.ratelimit.algorithm;

import java.time.Duration;

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
