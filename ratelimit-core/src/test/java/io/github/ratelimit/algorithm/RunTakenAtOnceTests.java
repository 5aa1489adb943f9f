package io.github.ratelimit.algorithm;

import java.time.Duration;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A run taken at once gives each request the decision it would have had one call at a
 * time: the batch reply of the Redis script, expanded in Java, against the algorithm
 * itself.
 */
class RunTakenAtOnceTests {

	@Property(tries = 500)
	void eachRequestGetsTheDecisionOfACallOfItsOwn(@ForAll("specs") LimitSpec spec,
			@ForAll @LongRange(min = 1, max = 4) long cost, @ForAll @IntRange(min = 0, max = 5) int earlier) {
		long now = 1L << 40;
		LimitState state = LimitState.fresh(spec);
		for (int i = 0; i < earlier; i++) {
			Transition transition = state.acquire(spec, now, cost, Long.MAX_VALUE);
			state = transition.next();
		}
		Transition first = state.acquire(spec, now, cost, Long.MAX_VALUE);
		if (!first.decision().allowed()) {
			return;
		}
		// What the script answers: the state before the first request, and what each
		// adds.
		boolean window = spec.algorithm() == Algorithm.FIXED_WINDOW;
		long baseWhole = window ? earlier * cost : credit(spec, earlier * cost);
		long baseFraction = window ? 0 : fraction(spec, earlier * cost);
		long step = window ? 0 : credit(spec, cost);
		long stepFraction = window ? 0 : fraction(spec, cost);
		RunTakenAtOnce run = new RunTakenAtOnce(spec, first.decision(), cost, baseWhole, baseFraction, step,
				stepFraction);
		LimitState next = first.next();
		for (int i = 0; i < 50; i++) {
			Transition one = next.acquire(spec, now, cost, Long.MAX_VALUE);
			if (!one.decision().allowed()) {
				break;
			}
			Decision expanded = run.next();
			assertThat(expanded).as("%s, request %d after the first", spec, i + 1).satisfies((decision) -> {
				assertThat(decision.remaining()).isEqualTo(one.decision().remaining());
				assertThat(decision.resetAfterMicros()).isEqualTo(one.decision().resetAfterMicros());
				assertThat(decision.delayMicros()).isEqualTo(one.decision().delayMicros());
			});
			next = one.next();
		}
	}

	@Test
	void aRunIsTakenAtOnceOnlyByBucketsAndFixedWindows() {
		LimitSpec log = LimitSpec.of(10, Duration.ofSeconds(1), Algorithm.SLIDING_LOG);
		Decision first = Decision.allowed(log, 9, 1_000_000, 0);
		assertThatIllegalArgumentException().isThrownBy(() -> new RunTakenAtOnce(log, first, 1, 0, 0, 0, 0))
			.withMessageContaining("SLIDING_LOG");
	}

	/** The whole microseconds of permits * T. */
	private static long credit(LimitSpec spec, long permits) {
		return permits * spec.emissionIntervalMicros()
				+ MulDiv.quotient(permits, spec.emissionIntervalRemainder(), spec.limit());
	}

	/** The rest of permits * T, in 1/L µs. */
	private static long fraction(LimitSpec spec, long permits) {
		return MulDiv.remainder(permits, spec.emissionIntervalRemainder(), spec.limit());
	}

	@Provide
	Arbitrary<LimitSpec> specs() {
		Arbitrary<Algorithm> algorithms = Arbitraries.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA, Algorithm.LEAKY_BUCKET,
				Algorithm.FIXED_WINDOW);
		Arbitrary<Long> limits = Arbitraries.oneOf(Arbitraries.longs().between(1, 100),
				Arbitraries.longs().between(1, LimitSpec.MAX_LIMIT));
		Arbitrary<Long> windows = Arbitraries.oneOf(Arbitraries.longs().between(1, 60_000),
				Arbitraries.longs().between(1, LimitSpec.MAX_WINDOW.toMillis()));
		return Combinators.combine(algorithms, limits, windows)
			.as((algorithm, limit, window) -> LimitSpec.builder()
				.algorithm(algorithm)
				.limit(limit)
				.window(Duration.ofMillis(window))
				.build())
			.ignoreException(IllegalArgumentException.class);
	}

}
