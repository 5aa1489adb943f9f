package io.github.ratelimit.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.status.BreakerState;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link CircuitBreaker} on a manual clock: it opens on failure sustained for a window,
 * not on a burst.
 */
class CircuitBreakerTests {

	private static final BreakerSettings SETTINGS = new BreakerSettings(Duration.ofSeconds(1), 50,
			Duration.ofSeconds(2), 3);

	private long now = TimeUnit.HOURS.toNanos(1);

	private final List<String> transitions = new ArrayList<>();

	private final CircuitBreaker breaker = new CircuitBreaker(SETTINGS,
			(from, to) -> this.transitions.add(from + "->" + to), () -> this.now);

	private void advance(long millis) {
		this.now += TimeUnit.MILLISECONDS.toNanos(millis);
	}

	private void call(boolean fails) {
		assertThat(this.breaker.tryAcquire()).isTrue();
		if (fails) {
			this.breaker.onFailure();
		}
		else {
			this.breaker.onSuccess();
		}
	}

	@Test
	void staysClosedWhileCallsSucceed() {
		for (int i = 0; i < 1000; i++) {
			call(false);
			advance(3);
		}
		assertThat(this.breaker.state()).isEqualTo(BreakerState.CLOSED);
		assertThat(this.transitions).isEmpty();
	}

	@Test
	void aBurstOfFailuresShorterThanTheWindowLeavesItClosed() {
		// A cold burst: 60 calls fail within 300ms, then the store answers again.
		for (int i = 0; i < 60; i++) {
			call(true);
			advance(5);
		}
		for (int i = 0; i < 300; i++) {
			call(false);
			advance(5);
		}
		// One more failure, well over a window after the burst began.
		call(true);
		assertThat(this.breaker.state()).isEqualTo(BreakerState.CLOSED);
		assertThat(this.breaker.tryAcquire()).isTrue();
	}

	@Test
	void failuresSustainedForTheWindowOpenIt() {
		// A stalled store: each call fails after a 100ms timeout.
		int calls = 0;
		while (this.breaker.state() == BreakerState.CLOSED) {
			call(true);
			calls++;
			advance(100);
		}
		assertThat(calls).as("calls that paid the timeout").isEqualTo(11);
		assertThat(this.transitions).containsExactly("CLOSED->OPEN");
		assertThat(this.breaker.tryAcquire()).isFalse();
	}

	@Test
	void intermittentFailuresAtTheThresholdOpenIt() {
		for (int i = 0; i < 30 && this.breaker.state() == BreakerState.CLOSED; i++) {
			call(i % 2 == 0);
			advance(50);
		}
		assertThat(this.breaker.state()).isEqualTo(BreakerState.OPEN);
	}

	@Test
	void failuresBelowTheThresholdNeverOpenIt() {
		for (int i = 0; i < 600; i++) {
			call(i % 3 == 0);
			advance(10);
		}
		assertThat(this.breaker.state()).isEqualTo(BreakerState.CLOSED);
	}

	@Test
	void stretchesWithoutCallsNeitherExtendNorEndAStreak() {
		call(true);
		advance(1200);
		call(true);
		assertThat(this.breaker.state()).as("failed every call for 1.2s").isEqualTo(BreakerState.OPEN);
	}

	@Test
	void anOpenBreakerWaitsThenLetsTheProbesThroughAndClosesWhenAllSucceed() {
		openIt();
		advance(1999);
		assertThat(this.breaker.tryAcquire()).isFalse();
		advance(1);
		for (int i = 0; i < 3; i++) {
			assertThat(this.breaker.tryAcquire()).as("probe %d", i + 1).isTrue();
		}
		assertThat(this.breaker.state()).isEqualTo(BreakerState.HALF_OPEN);
		assertThat(this.breaker.tryAcquire()).as("not a probe").isFalse();
		this.breaker.onSuccess();
		this.breaker.onSuccess();
		assertThat(this.breaker.state()).isEqualTo(BreakerState.HALF_OPEN);
		this.breaker.onSuccess();
		assertThat(this.breaker.state()).isEqualTo(BreakerState.CLOSED);
		assertThat(this.transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
		// A fresh start: one failure does not open it again.
		call(true);
		assertThat(this.breaker.state()).isEqualTo(BreakerState.CLOSED);
	}

	@Test
	void aFailedProbeOpensItAgain() {
		openIt();
		advance(2000);
		assertThat(this.breaker.tryAcquire()).isTrue();
		this.breaker.onFailure();
		assertThat(this.breaker.state()).isEqualTo(BreakerState.OPEN);
		assertThat(this.breaker.tryAcquire()).isFalse();
		advance(2000);
		assertThat(this.breaker.tryAcquire()).isTrue();
	}

	@Test
	void anIgnoredProbeGivesItsPlaceBack() {
		openIt();
		advance(2000);
		for (int i = 0; i < 3; i++) {
			assertThat(this.breaker.tryAcquire()).isTrue();
		}
		this.breaker.onIgnored();
		assertThat(this.breaker.tryAcquire()).isTrue();
		assertThat(this.breaker.tryAcquire()).isFalse();
	}

	@Test
	void settingsAreChecked() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new BreakerSettings(Duration.ZERO, 50, Duration.ofSeconds(1), 3))
			.withMessage("window must be positive but was PT0S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new BreakerSettings(Duration.ofSeconds(1), 0, Duration.ofSeconds(1), 3))
			.withMessage("failureRateThreshold must be between 1 and 100 but was 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new BreakerSettings(Duration.ofSeconds(1), 50, Duration.ofSeconds(-1), 3))
			.withMessageContaining("waitInOpenState must be positive");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new BreakerSettings(Duration.ofSeconds(1), 50, Duration.ofSeconds(1), 0))
			.withMessage("probes must be at least 1 but was 0");
	}

	private void openIt() {
		call(true);
		while (this.breaker.state() == BreakerState.CLOSED) {
			advance(100);
			call(true);
		}
	}

}
