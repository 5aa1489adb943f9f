package io.github.ratelimit.benchmarks;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LoadWarmUpTests {

	@Test
	void aClimbIsNotLevel() {
		// The sample app on Redis in one quick run's measured rounds.
		assertThat(LoadWarmUp.levelled(List.of(3204.0, 2485.0, 3080.0, 4094.0, 4784.0, 5138.0))).isFalse();
		assertThat(LoadWarmUp.levelled(List.of(4094.0, 4784.0, 5138.0, 6472.0, 5355.0, 7462.0))).isFalse();
	}

	@Test
	void noiseAroundOneLevelIsLevel() {
		assertThat(LoadWarmUp.levelled(List.of(10_000.0, 11_000.0, 9_000.0, 10_400.0, 9_600.0, 10_300.0))).isTrue();
	}

	@Test
	void aDropIsLevelSinceMoreWarmingWouldNotCureIt() {
		assertThat(LoadWarmUp.levelled(List.of(10_000.0, 10_000.0, 10_000.0, 6_000.0, 6_000.0, 6_000.0))).isTrue();
	}

	@Test
	void twoWindowsAreNeededBeforeAnythingIsLevel() {
		assertThat(LoadWarmUp.levelled(List.of())).isFalse();
		assertThat(LoadWarmUp.levelled(List.of(10_000.0, 10_000.0, 10_000.0, 10_000.0, 10_000.0))).isFalse();
	}

	@Test
	void moreThanTheToleranceAboveIsStillClimbing() {
		assertThat(LoadWarmUp.levelled(List.of(100.0, 100.0, 100.0, 104.0, 104.0, 104.0))).isTrue();
		assertThat(LoadWarmUp.levelled(List.of(100.0, 100.0, 100.0, 106.0, 106.0, 106.0))).isFalse();
	}

}
