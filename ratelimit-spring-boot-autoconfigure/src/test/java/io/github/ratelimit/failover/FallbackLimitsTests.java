package io.github.ratelimit.failover;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FallbackLimits}: each instance's share of a limit while the store fails.
 */
class FallbackLimitsTests {

	@Test
	void oneInstanceKeepsTheLimitsAsTheyAre() {
		List<LimitSpec> limits = List.of(LimitSpec.of(20, "1h", Algorithm.SLIDING_LOG));
		assertThat(new FallbackLimits(1).of(limits)).isSameAs(limits);
	}

	@Test
	void limitsAndBurstsAreDividedRoundingUp() {
		LimitSpec log = LimitSpec.of(20, "1h", Algorithm.SLIDING_LOG);
		LimitSpec bucket = LimitSpec.builder()
			.limit(10)
			.window("1s")
			.burst(50)
			.algorithm(Algorithm.TOKEN_BUCKET)
			.build();
		List<LimitSpec> shares = new FallbackLimits(3).of(List.of(log, bucket));
		assertThat(shares.get(0)).isEqualTo(LimitSpec.of(7, "1h", Algorithm.SLIDING_LOG));
		assertThat(shares.get(1).limit()).isEqualTo(4);
		assertThat(shares.get(1).burst()).isEqualTo(17);
		assertThat(shares.get(1).window()).isEqualTo(bucket.window());
		assertThat(shares.get(1).algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
	}

	@Test
	void aShareIsNeverZero() {
		LimitSpec small = LimitSpec.of(2, "1m", Algorithm.FIXED_WINDOW);
		assertThat(new FallbackLimits(5).of(List.of(small)))
			.containsExactly(LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
	}

	@Test
	void theSameLimitGetsTheSameShare() {
		FallbackLimits limits = new FallbackLimits(4);
		LimitSpec spec = LimitSpec.of(100, "1m", Algorithm.GCRA);
		assertThat(limits.of(List.of(spec)).get(0)).isSameAs(limits.of(List.of(spec)).get(0));
	}

}
