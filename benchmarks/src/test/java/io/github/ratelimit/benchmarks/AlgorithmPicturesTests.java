package io.github.ratelimit.benchmarks;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The claims {@code docs/algorithms.svg} makes hold for the trace it draws.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class AlgorithmPicturesTests {

	private final long[] trace = AlgorithmPictures.trace();

	private final Map<Algorithm, AlgorithmPictures.Row> rows = new EnumMap<>(Algorithm.class);

	AlgorithmPicturesTests() {
		for (Algorithm algorithm : Algorithm.values()) {
			this.rows.put(algorithm, AlgorithmPictures.run(algorithm, this.trace));
		}
	}

	@Test
	void fixedWindowAdmitsTwiceTheLimitAcrossAWindowEdge() {
		assertThat(this.rows.get(Algorithm.FIXED_WINDOW).maxPerSecond()).isEqualTo(20);
	}

	@Test
	void slidingLogAndCounterNeverAdmitMoreThanTheLimitInAnySecond() {
		assertThat(this.rows.get(Algorithm.SLIDING_LOG).maxPerSecond()).isEqualTo(10);
		assertThat(this.rows.get(Algorithm.SLIDING_WINDOW_COUNTER).maxPerSecond()).isEqualTo(10);
	}

	@Test
	void gcraAdmitsExactlyWhatTokenBucketAdmits() {
		assertThat(this.rows.get(Algorithm.GCRA).allowed())
			.containsExactly(this.rows.get(Algorithm.TOKEN_BUCKET).allowed());
	}

	@Test
	void leakyBucketLetsRequestsProceedAtTheLimitRate() {
		AlgorithmPictures.Row leaky = this.rows.get(Algorithm.LEAKY_BUCKET);
		assertThat(leaky.maxPerSecond()).isLessThanOrEqualTo(10);
		assertThat(Arrays.stream(leaky.delayMs()).max().orElse(0)).isGreaterThan(0);
	}

}
