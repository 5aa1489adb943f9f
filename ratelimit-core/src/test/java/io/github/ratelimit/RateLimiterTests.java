package io.github.ratelimit;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link RateLimiter} on an {@link InMemoryRateLimitStore} driven by a
 * {@link ManualTimeSource}; its sleeper records each wait and moves the clock by it.
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

	private final List<Long> sleeps = new CopyOnWriteArrayList<>();

	private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
		.timeSource(this.time)
		.executor(Runnable::run)
		.build();

	private RateLimiter limiter(LimitSpec... limits) {
		RateLimiter.Builder builder = RateLimiter.builder(this.store)
			.bucket("api")
			.timeSource(this.time)
			.sleeper(this::sleep);
		for (LimitSpec limit : limits) {
			builder.limit(limit);
		}
		return builder.build();
	}

	private void sleep(long micros) {
		this.sleeps.add(micros);
		this.time.advanceMicros(micros);
	}

	@Test
	void tryAcquireTakesOnePermitUntilTheLimitIsSpent() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		assertThat(limiter.tryAcquire("alice").remaining()).isEqualTo(2);
		assertThat(limiter.tryAcquire("alice").remaining()).isEqualTo(1);
		assertThat(limiter.tryAcquire("alice").remaining()).isZero();
		Decision rejected = limiter.tryAcquire("alice");
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.retryAfterMicros()).isEqualTo(SECOND);
		assertThat(limiter.tryAcquire("bob").allowed()).as("keys are independent").isTrue();
		assertThat(this.sleeps).isEmpty();
	}

	@Test
	void tryAcquireWithCostTakesThatManyPermitsOrNone() {
		RateLimiter limiter = limiter(THREE_PER_3S);
		assertThat(limiter.tryAcquire("alice", 2).remaining()).isEqualTo(1);
		Decision rejected = limiter.tryAcquire("alice", 2);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(1);
		assertThat(rejected.retryAfterMicros()).isEqualTo(SECOND);
		assertThat(limiter.tryAcquire("alice", 1).allowed()).as("the rejection took nothing").isTrue();
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
		assertThat(limiter.tryAcquire("alice").allowed()).isFalse();
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
		Decision decision = limiter.acquire("alice", Duration.ZERO);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isEqualTo(2);
		assertThat(this.sleeps).isEmpty();
	}

	@Test
	void acquireWaitsExactlyRetryAfterThenSucceeds() throws InterruptedException {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		Decision decision = limiter.acquire("alice", Duration.ofSeconds(5));
		assertThat(decision.allowed()).isTrue();
		assertThat(this.sleeps).containsExactly(SECOND);
		assertThat(this.time.nowMicros()).isEqualTo(START + SECOND);
		assertThat(limiter.peek("alice").remaining()).as("the refilled permit was taken").isZero();
	}

	@Test
	void acquireWithCostWaitsForAllItsPermits() throws InterruptedException {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		assertThat(limiter.acquire("alice", 2, Duration.ofSeconds(2)).allowed()).isTrue();
		assertThat(this.sleeps).containsExactly(2 * SECOND);
	}

	@Test
	void acquireWithMaxWaitEqualToRetryAfterSucceeds() throws InterruptedException {
		RateLimiter limiter = limiter(THREE_PER_3S);
		limiter.tryAcquire("alice", 3);
		assertThat(limiter.acquire("alice", Duration.ofSeconds(1)).allowed()).isTrue();
		assertThat(this.sleeps).containsExactly(SECOND);
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
		assertThat(this.sleeps).isEmpty();
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
		assertThat(this.sleeps).isEmpty();
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
		assertThat(limiter.acquire("alice", Duration.ofSeconds(1)).delayMicros()).as("empty queue").isZero();
		Decision second = limiter.acquire("alice", Duration.ofSeconds(1));
		assertThat(second.allowed()).isTrue();
		assertThat(second.delayMicros()).isEqualTo(100 * MILLI);
		Decision third = limiter.acquire("alice", Duration.ofSeconds(1));
		assertThat(third.delayMicros()).isEqualTo(100 * MILLI);
		assertThat(this.sleeps).as("one slot every 100ms").containsExactly(100 * MILLI, 100 * MILLI);
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
		assertThat(this.sleeps).isEmpty();
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
		assertThat(this.sleeps).as("waits started before failing").isEmpty();
		assertThat(this.time.nowMicros()).isEqualTo(START);
	}

	@Test
	void interruptedSleepPropagatesInterruptedException() {
		RateLimiter limiter = RateLimiter.builder(this.store)
			.bucket("api")
			.limit(THREE_PER_3S)
			.timeSource(this.time)
			.sleeper((micros) -> {
				throw new InterruptedException("stop");
			})
			.build();
		limiter.tryAcquire("alice", 3);
		assertThatExceptionOfType(InterruptedException.class)
			.isThrownBy(() -> limiter.acquire("alice", Duration.ofSeconds(5)))
			.withMessage("stop");
		assertThat(limiter.peek("alice").remaining()).isZero();
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
		assertThat(limiter.bucket()).isEqualTo("default");
		assertThat(limiter.limits()).containsExactly(THREE_PER_3S, perMinute);
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
		Decision rejected = limiter.tryAcquire("alice");
		assertThat(rejected.retryAfterMicros()).isEqualTo(1_500 * MILLI);
		RateLimitExceededException ex = new RateLimitExceededException("api", rejected);
		assertThat(ex).hasMessageContaining("'api'")
			.hasMessageContaining("2 per 3s")
			.hasMessageContaining("retry after 1500ms");
		assertThat(ex.getDecision()).isSameAs(rejected);
	}

}
