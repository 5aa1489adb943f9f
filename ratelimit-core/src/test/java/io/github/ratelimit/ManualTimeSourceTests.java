package io.github.ratelimit;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ManualTimeSourceTests {

	@Test
	void movesOnlyForwardAndOnlyWhenTold() {
		ManualTimeSource time = new ManualTimeSource(1000);
		assertThat(time.nowMicros()).isEqualTo(1000);
		time.advance(Duration.ofMillis(2));
		assertThat(time.nowMicros()).isEqualTo(3000);
		assertThatIllegalArgumentException().isThrownBy(() -> time.advanceMicros(-1));
	}

}
