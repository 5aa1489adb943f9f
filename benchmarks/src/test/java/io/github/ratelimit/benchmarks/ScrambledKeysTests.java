package io.github.ratelimit.benchmarks;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ScrambledKeysTests {

	@Test
	void everyKeyIsVisitedOncePerPeriod() {
		ScrambledKeys keys = new ScrambledKeys(100_000);
		Set<Integer> seen = new HashSet<>();
		for (int i = 0; i < 100_000; i++) {
			seen.add(keys.next());
		}
		assertThat(seen).hasSize(100_000);
		assertThat(seen).allMatch((key) -> key >= 0 && key < 100_000);
	}

	@Test
	void oneKeyIsAlwaysKeyZero() {
		ScrambledKeys keys = new ScrambledKeys(1);
		for (int i = 0; i < 10; i++) {
			assertThat(keys.next()).isZero();
		}
	}

	@Test
	void noKeysIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ScrambledKeys(0)).withMessageContaining("at least 1");
	}

}
