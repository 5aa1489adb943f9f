package io.github.ratelimit.acquire;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link RateLimiter#reserve} and {@link Reservation}: an estimate taken up front,
 * settled once with what the call used.
 */
class ReservationTests {

	private final ManualTimeSource time = new ManualTimeSource(28_333_333L * 60_000_000L);

	private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
		.timeSource(this.time)
		.executor(Runnable::run)
		.build();

	private final RecordingObserver observer = new RecordingObserver();

	private final RateLimiter tokens = RateLimiter
		.builder(Acquirer.builder(this.store).waiter(new ManualWaiter(this.time)).observer(this.observer).build())
		.bucket("tokens")
		.limit(LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW))
		.build();

	@Test
	void lessGivesTheDifferenceBackMoreTakesTheExcessAndASettlementHappensOnce() {
		Reservation reservation = this.tokens.reserve("key", 40);
		assertThat(reservation.proceeds()).isTrue();
		assertThat(reservation.estimate()).isEqualTo(40);
		assertThat(this.tokens.peek("key").remaining()).isEqualTo(60);
		assertThat(reservation.settle(10)).isTrue();
		assertThat(this.tokens.peek("key").remaining()).isEqualTo(90);
		assertThat(reservation.settle(90)).isFalse();
		assertThat(reservation.cancel()).isFalse();
		assertThat(this.tokens.peek("key").remaining()).as("settled once").isEqualTo(90);
		assertThat(reservation.isSettled()).isTrue();
		this.tokens.reserve("key", 10).settle(60);
		assertThat(this.tokens.peek("key").remaining()).isEqualTo(30);
	}

	@Test
	void aRejectedReservationTakesNothingAndSettlesNothing() {
		this.tokens.reserve("key", 100);
		Reservation rejected = this.tokens.reserve("key", 1);
		assertThat(rejected.proceeds()).isFalse();
		assertThat(rejected.decision().retryAfterMicros()).isPositive();
		assertThat(rejected.settle(50)).isTrue();
		assertThat(this.tokens.peek("key").remaining()).isZero();
		this.time.advanceMicros(60_000_000L);
		assertThat(this.tokens.peek("key").remaining()).as("no debt from the rejected one").isEqualTo(100);
	}

	@Test
	void aNegativeSettlementIsRefusedAndLeavesTheReservationOpen() {
		Reservation reservation = this.tokens.reserve("key", 40);
		assertThatIllegalArgumentException().isThrownBy(() -> reservation.settle(-1))
			.withMessage("a settlement must not be negative but was -1 (bucket 'tokens')");
		assertThat(reservation.isSettled()).isFalse();
		assertThat(reservation.cancel()).isTrue();
		assertThat(this.tokens.peek("key").remaining()).isEqualTo(100);
	}

	@Test
	void observersAreToldOfEverySettlement() {
		Reservation reservation = this.tokens.reserve("key", 40);
		reservation.settle(45);
		assertThat(this.observer.settled()).containsExactly(45L);
	}

}
