package io.github.ratelimit.algorithm;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LimitState#lifetimeMicros(LimitSpec)} bounds every state a decision, refund or
 * peek can leave behind: the in-memory store holds keys on that promise.
 */
class LimitStateLifetimeTests {

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void noOperationLeavesStateThatMattersPastItsLifetime(Algorithm algorithm) {
		Random random = new Random(algorithm.ordinal());
		List<LimitSpec> specs = List.of(LimitSpec.of(10, Duration.ofSeconds(10), algorithm),
				LimitSpec.of(3, Duration.ofMillis(17), algorithm),
				LimitSpec.builder().limit(7).window(Duration.ofSeconds(3)).algorithm(algorithm).burst(40).build(),
				LimitSpec.builder().limit(1000).window(Duration.ofMinutes(1)).algorithm(algorithm).burst(1).build(),
				LimitSpec.builder().limit(9).window(Duration.ofSeconds(1)).algorithm(algorithm).segments(3).build());
		for (LimitSpec spec : specs) {
			LimitState state = LimitState.fresh(spec);
			long lifetime = LimitState.lifetimeMicros(spec);
			long now = 1_800_000_000_123_457L;
			for (int step = 0; step < 5000; step++) {
				now += switch (random.nextInt(4)) {
					case 0 -> random.nextLong(2 * lifetime + 2);
					case 1 -> 0;
					default -> random.nextLong(lifetime / spec.limit() + 2);
				};
				long cost = 1 + random.nextInt((int) Math.min(spec.capacity(), 5));
				state = switch (random.nextInt(6)) {
					case 0 -> state.refund(spec, now, cost);
					case 1 -> state.peek(spec, now).next();
					default ->
						state.acquire(spec, now, cost, random.nextBoolean() ? Long.MAX_VALUE : lifetime / 2).next();
				};
				assertThat(state.expiresAtMicros()).as("%s at step %d", spec, step).isLessThanOrEqualTo(now + lifetime);
			}
		}
	}

}
