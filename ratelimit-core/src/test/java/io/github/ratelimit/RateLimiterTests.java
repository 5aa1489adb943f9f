package io.github.ratelimit;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.acquire.RecordingObserver;
import io.github.ratelimit.acquire.Waiter;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link RateLimiter} on an {@link InMemoryRateLimitStore} driven by a
 * {@link ManualTimeSource}; its waiter records each wait and moves the clock by it.
 */
class RateLimiterTests {

	private static final long START = 1_800_000_000_000_000L;

	private static final long SECOND = 1_000_000L;

	private static final long MILLI = 1_000L;

	/** Three permits, refilled at one per second. */
	private static final LimitSpec THREE_PER_3S = LimitSpec.of(3, "3s", Algorithm.TOKEN_BUCKET);

	/** A queue of ten slots, one every 100ms. */
	private static final LimitSpec LEAKY_10_PER_1S = LimitSpec.of(10, "1s", Algorithm.LEAKY_BUCKET);

	private final ManualTimeSource time = new ManualTimeSource(START);

	private final ManualWaiter waiter = new ManualWaiter(this.time);

	private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
		.timeSource(this.time)
		.executor(Runnable::run)
		.build();

	private final RecordingObserver observer = new RecordingObserver();

	private final Acquirer acquirer = Acquirer.builder(this.store).waiter(this.waiter).observer(this.observer).build();

	@AfterEach
	void clearInterrupt() {
		Thread.interrupted();
	}

	private RateLimiter limiter(LimitSpec... limits) {
		RateLimiter.Builder builder = RateLimiter.builder(this.acquirer).bucket("api");
		for (LimitSpec limit : limits) {
			builder.limit(limit);
		}
		return builder.build();
	}

	@Test
	void tryAcquireTakesOnePermitUntilTheLimitIsSpent() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		assertThat(limiter.tryAcquire("alice").decision().remaining()).isEqualTo(2);
		assertThat(limiter.tryAcquire("alice").decision().remaining()).isEqualTo(1);
		assertThat(limiter.tryAcquire("alice").decision().remaining()).isZero();
		Decision rejected = limiter.tryAcquire("alice").decision();
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.retryAfterMicros()).isEqualTo(SECOND);
		assertThat(limiter.tryAcquire("bob").proceeds()).as("keys are independent").isTrue();
		assertThat(this.waiter.sleeps()).isEmpty();
	}

	@Test
	void tryAcquireWithCostTakesThatManyPermitsOrNone() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		assertThat(limiter.tryAcquire("alice", 2).decision().remaining()).isEqualTo(1);
		Decision rejected = limiter.tryAcquire("alice", 2).decision();
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(1);
		assertThat(rejected.retryAfterMicros()).isEqualTo(SECOND);
		assertThat(limiter.tryAcquire("alice", 1).proceeds()).as("the rejection took nothing").isTrue();
	}

	@Test
	void tryAcquireWithCostBelowOneIsRejected() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		assertThatIllegalArgumentException().isThrownBy(() -> limiter.tryAcquire("alice", 0))
			.withMessageContaining("cost");
	}

	@Test
	void refundGivesPermitsBack() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		assertThat(limiter.peek("alice").remaining()).isZero();
		limiter.refund("alice", 2);
		assertThat(limiter.peek("alice").remaining()).isEqualTo(2);
		limiter.refund("alice", 5);
		assertThat(limiter.peek("alice").remaining()).as("never above the capacity").isEqualTo(3);
	}

	@Test
	void peekReportsWithoutConsuming() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		assertThat(limiter.peek("alice").remaining()).isEqualTo(3);
		assertThat(limiter.peek("alice").remaining()).isEqualTo(3);
		limiter.tryAcquire("alice");
		Decision peeked = limiter.peek("alice");
		assertThat(peeked.allowed()).isTrue();
		assertThat(peeked.remaining()).isEqualTo(2);
		limiter.tryAcquire("alice", 2);
		assertThat(limiter.peek("alice").allowed()).isFalse();
		assertThat(limiter.tryAcquire("alice").proceeds()).isFalse();
	}

	@Test
	void resetRestoresTheFullLimit() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		limiter.tryAcquire("bob", 3);
		limiter.reset("alice");
		assertThat(limiter.peek("alice").remaining()).isEqualTo(3);
		assertThat(limiter.peek("bob").remaining()).as("other keys keep their state").isZero();
	}

	@Test
	void acquireWithAPermitAvailableDoesNotWait() throws InterruptedException {
		RateLimiter limiter = limiter(THREE_PER_3S);
		Decision decision = limiter.acquire("alice", Duration.ZERO).decision();
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isEqualTo(2);
		assertThat(this.waiter.sleeps()).isEmpty();
	}

	@Test
	void acquireWaitsExactlyRetryAfterThenSucceeds() throws InterruptedException {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		Decision decision = limiter.acquire("alice", Duration.ofSeconds(5)).decision();
		assertThat(decision.allowed()).isTrue();
		assertThat(this.waiter.sleeps()).containsExactly(SECOND);
		assertThat(this.time.nowMicros()).isEqualTo(START + SECOND);
		assertThat(limiter.peek("alice").remaining()).as("the refilled permit was taken").isZero();
	}

	@Test
	void acquireWithCostWaitsForAllItsPermits() throws InterruptedException {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		assertThat(limiter.acquire("alice", 2, Duration.ofSeconds(2)).proceeds()).isTrue();
		assertThat(this.waiter.sleeps()).containsExactly(2 * SECOND);
	}

	@Test
	void acquireWithMaxWaitEqualToRetryAfterSucceeds() throws InterruptedException {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		assertThat(limiter.acquire("alice", Duration.ofSeconds(1)).proceeds()).isTrue();
		assertThat(this.waiter.sleeps()).containsExactly(SECOND);
	}

	@Test
	void acquireFailsAtOnceWhenRetryAfterExceedsMaxWait() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> limiter.acquire("alice", Duration.ofMillis(999)))
			.satisfies((ex) -> {
				assertThat(ex.getBucket()).isEqualTo("api");
				assertThat(ex.getDecision().allowed()).isFalse();
				assertThat(ex.getDecision().retryAfterMicros()).isEqualTo(SECOND);
			});
		assertThat(this.waiter.sleeps()).isEmpty();
		assertThat(this.time.nowMicros()).isEqualTo(START);
	}

	@Test
	void acquireOfACostAboveCapacityFailsAtOnceSayingWaitingWillNotHelp() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> limiter.acquire("alice", 4, Duration.ofHours(1)))
			.withMessageContaining("'api'")
			.withMessageContaining("waiting will not help")
			.satisfies((ex) -> assertThat(ex.getDecision().retryable()).isFalse());
		assertThat(this.waiter.sleeps()).isEmpty();
		assertThat(limiter.peek("alice").remaining()).isEqualTo(3);
	}

	@Test
	void acquireWithNegativeMaxWaitIsRejectedNamingTheValue() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		assertThatIllegalArgumentException().isThrownBy(() -> limiter.acquire("alice", Duration.ofSeconds(-1)))
			.withMessageContaining("maxWait")
			.withMessageContaining("PT-1S");
	}

	@Test
	void leakyBucketAcquireSleepsTheDecisionsDelay() throws InterruptedException {
		RateLimiter limiter = limiter(LEAKY_10_PER_1S);
		assertThat(limiter.acquire("alice", Duration.ofSeconds(1)).decision().delayMicros()).as("empty queue").isZero();
		Decision second = limiter.acquire("alice", Duration.ofSeconds(1)).decision();
		assertThat(second.allowed()).isTrue();
		assertThat(second.delayMicros()).isEqualTo(100 * MILLI);
		Decision third = limiter.acquire("alice", Duration.ofSeconds(1)).decision();
		assertThat(third.delayMicros()).isEqualTo(100 * MILLI);
		assertThat(this.waiter.sleeps()).as("one slot every 100ms").containsExactly(100 * MILLI, 100 * MILLI);
		assertThat(this.time.nowMicros()).isEqualTo(START + 200 * MILLI);
	}

	@Test
	void leakyBucketAcquireWithMaxWaitShorterThanTheQueueDelayFailsAndConsumesNothing() {
		RateLimiter limiter = limiter(LEAKY_10_PER_1S);
		for (int i = 0; i < 5; i++) {
			limiter.tryAcquire("alice");
		}
		assertThat(limiter.peek("alice").remaining()).isEqualTo(5);
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> limiter.acquire("alice", Duration.ofMillis(200)))
			.satisfies((ex) -> assertThat(ex.getDecision().allowed()).isFalse());
		assertThat(this.waiter.sleeps()).isEmpty();
		assertThat(limiter.peek("alice").remaining()).isEqualTo(5);
	}

	@Test
	void leakyBucketAcquireDoesNotWaitWhenTheQueueDelayAloneExceedsMaxWait() {
		RateLimiter limiter = limiter(LEAKY_10_PER_1S);
		for (int i = 0; i < 3; i++) {
			limiter.tryAcquire("alice");
		}
		// The next slot is 300ms away whatever the caller does: a 200ms budget can never
		// be enough, which is known before any wait starts.
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> limiter.acquire("alice", Duration.ofMillis(200)));
		assertThat(this.waiter.sleeps()).as("waits started before failing").isEmpty();
		assertThat(this.time.nowMicros()).isEqualTo(START);
	}

	@Test
	void interruptedWaitForAPermitThrowsInterruptedExceptionAndTakesNothing() {
		Waiter interrupted = new Waiter() {

			@Override
			public TimeSource clock() {
				return RateLimiterTests.this.time;
			}

			@Override
			public void sleep(long micros) throws InterruptedException {
				throw new InterruptedException("stop");
			}

			@Override
			public CompletionStage<Void> delay(long micros) {
				throw new UnsupportedOperationException();
			}

			@Override
			public Executor executor() {
				return Runnable::run;
			}

		};
		RateLimiter limiter = RateLimiter.builder(Acquirer.builder(this.store).waiter(interrupted).build())
			.bucket("api")
			.limit(THREE_PER_3S)
			.build();
		limiter.tryAcquire("alice", 3);
		assertThatExceptionOfType(InterruptedException.class)
			.isThrownBy(() -> limiter.acquire("alice", Duration.ofSeconds(5)))
			.withMessageContaining("'api'");
		assertThat(Thread.currentThread().isInterrupted()).as("cleared, as InterruptedException does").isFalse();
		assertThat(limiter.peek("alice").remaining()).isZero();
	}

	@Test
	void acquireThatWaitedIsObservedAsWaitedAndTryAcquireAsAllowedOrRejected() throws InterruptedException {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		limiter.tryAcquire("alice");
		assertThat(limiter.acquire("alice", Duration.ofSeconds(5)).outcome()).isEqualTo(Outcome.WAITED);
		assertThat(this.observer.outcomes()).containsExactly(Outcome.ALLOWED, Outcome.REJECTED, Outcome.WAITED);
	}

	@Test
	void shadowBucketLetsEveryCallProceedAndTakesNothingWhenOver() throws InterruptedException {
		RateLimiter limiter = RateLimiter.builder(this.acquirer)
			.bucket("trial")
			.limit(THREE_PER_3S)
			.mode(LimitMode.SHADOW)
			.build();
		limiter.tryAcquire("alice", 3);
		RateLimitResult over = limiter.tryAcquire("alice");
		assertThat(over.proceeds()).isTrue();
		assertThat(over.outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
		assertThat(over.decision().allowed()).as("what enforcing would have said").isFalse();
		assertThat(limiter.acquire("alice", Duration.ofSeconds(5)).outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
		assertThat(this.waiter.sleeps()).as("a shadow rejection is not waited out").isEmpty();
	}

	@Test
	void ownAcquirerOnAStoreWorksWithoutAnyWaiterOrObserver() {
		RateLimiter limiter = RateLimiter.builder(this.store).bucket("plain").limit(THREE_PER_3S).build();
		assertThat(limiter.tryAcquire("alice", 3).proceeds()).isTrue();
		assertThat(limiter.tryAcquire("alice").proceeds()).isFalse();
		assertThat(limiter.bucket().mode()).isEqualTo(LimitMode.ENFORCE);
		assertThat(limiter).hasToString("RateLimiter plain [" + THREE_PER_3S + "]");
	}

	@Test
	void builderWithoutALimitIsRejectedNamingTheBucket() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimiter.builder(this.store).bucket("orders").build())
			.withMessageContaining("'orders'");
	}

	@Test
	void builderDefaultsTheBucketAndKeepsLimitsInOrder() {
		LimitSpec perMinute = LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW);
		RateLimiter limiter = RateLimiter.builder(this.store).limit(THREE_PER_3S).limit(perMinute).build();
		assertThat(limiter.bucket().name()).isEqualTo("default");
		assertThat(limiter.bucket().limits()).containsExactly(THREE_PER_3S, perMinute);
	}

	@Test
	void builderRejectsAnEmptyBucketName() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimiter.builder(this.store).bucket(""))
			.withMessageContaining("bucket");
	}

	@Test
	void exceptionMessageNamesTheBucketTheLimitAndTheRetryAfter() {
		RateLimiter limiter = limiter(LimitSpec.of(2, "3s", Algorithm.GCRA));
		limiter.tryAcquire("alice", 2);
		Decision rejected = limiter.tryAcquire("alice").decision();
		assertThat(rejected.retryAfterMicros()).isEqualTo(1_500 * MILLI);
		RateLimitExceededException ex = new RateLimitExceededException("api", rejected);
		assertThat(ex).hasMessageContaining("'api'")
			.hasMessageContaining("2 per 3s")
			.hasMessageContaining("retry after 1.5s");
		assertThat(ex.getDecision()).isSameAs(rejected);
	}

}
