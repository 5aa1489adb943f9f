package io.github.ratelimit.acquire;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.HeldDecision;
import io.github.ratelimit.concurrency.Holders;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.concurrency.OnStoreFailure;
import io.github.ratelimit.concurrency.RateAndConcurrencyStore;
import io.github.ratelimit.store.CountingStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link Acquirer#acquireHolding} and {@link Acquirer#acquireHoldingAsync}: a
 * request limited by the rate and the concurrency of one bucket takes its permit and its
 * decision in one store call, with what the observers are told, shadow mode, leaky bucket
 * waits, the two-call way where one call cannot do, and store failures.
 */
class AcquirerHoldingTests {

	private static final long START = 1_800_000_000_000_000L;

	private final ManualTimeSource time = new ManualTimeSource(START);

	private final ManualWaiter waiter = ManualWaiter.releasingDelays(this.time);

	private final CountingStore store = new CountingStore(
			InMemoryRateLimitStore.builder().timeSource(this.time).executor(Runnable::run).build());

	private final RecordingObserver observer = new RecordingObserver();

	private final Acquirer acquirer = Acquirer.builder(this.store).waiter(this.waiter).observer(this.observer).build();

	private final LeaseRenewer renewer = new LeaseRenewer();

	/** Three a minute. */
	private final Bucket exports = Bucket.of("exports", LimitSpec.of(3, "1m", Algorithm.FIXED_WINDOW));

	@AfterEach
	void stopRenewing() {
		this.renewer.close();
	}

	@Test
	void takesThePermitAndTheDecisionInOneStoreCall() {
		ConcurrencyLimiter limiter = limiter("exports", 2, OnStoreFailure.LOCAL);
		Acquirer.Holding holding = this.acquirer.acquireHolding(PermitRequest.of(this.exports, "acme", 1), limiter);
		assertThat(holding.permit().acquired()).isTrue();
		assertThat(holding.acquisition().granted()).isTrue();
		assertThat(holding.acquisition().results()).singleElement()
			.satisfies((result) -> assertThat(result.decision().remaining()).isEqualTo(2));
		assertThat(this.store.calls()).isEqualTo("decideHolding=1 decide=0 acquire=0");
		assertThat(this.observer.results()).isEqualTo(holding.acquisition().results());
		assertThat(this.store.holders("exports", "acme").count()).isEqualTo(1);
		holding.permit().release();
		assertThat(this.store.holders("exports", "acme").count()).isZero();
	}

	@Test
	void aRequestWithNoPermitFreeIsNotDecidedAndTheObserversHearNothing() {
		ConcurrencyLimiter limiter = limiter("exports", 1, OnStoreFailure.LOCAL);
		Acquirer.Holding first = this.acquirer.acquireHolding(PermitRequest.of(this.exports, "acme", 1), limiter);
		Acquirer.Holding second = this.acquirer.acquireHolding(PermitRequest.of(this.exports, "acme", 1), limiter);
		assertThat(second.permit().acquired()).isFalse();
		assertThat(second.acquisition()).isNull();
		assertThat(this.observer.results()).hasSize(1);
		assertThat(this.store.peek("exports", "acme", this.exports.limits()).remaining()).isEqualTo(2);
		first.permit().release();
	}

	@Test
	void aRequestTheRateLimitRejectsHoldsNoPermit() {
		ConcurrencyLimiter limiter = limiter("exports", 5, OnStoreFailure.LOCAL);
		for (int i = 0; i < 3; i++) {
			this.acquirer.acquireHolding(PermitRequest.of(this.exports, "acme", 1), limiter).permit().release();
		}
		Acquirer.Holding rejected = this.acquirer.acquireHolding(PermitRequest.of(this.exports, "acme", 1), limiter);
		assertThat(rejected.acquisition().granted()).isFalse();
		assertThat(rejected.acquisition().rejection().outcome()).isEqualTo(Outcome.REJECTED);
		assertThat(rejected.permit().acquired()).isFalse();
		assertThat(this.store.holders("exports", "acme").count()).isZero();
	}

	@Test
	void aRejectionInShadowModeHoldsItsPermitForTheCallThatRuns() {
		Bucket shadow = new Bucket("exports", List.of(LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW)), LimitMode.SHADOW);
		ConcurrencyLimiter limiter = limiter("exports", 5, OnStoreFailure.LOCAL);
		this.acquirer.acquireHolding(PermitRequest.of(shadow, "acme", 1), limiter);
		Acquirer.Holding second = this.acquirer.acquireHolding(PermitRequest.of(shadow, "acme", 1), limiter);
		assertThat(second.acquisition().granted()).isTrue();
		assertThat(second.acquisition().results().get(0).outcome()).isEqualTo(Outcome.SHADOW_REJECTED);
		assertThat(second.permit().acquired()).isTrue();
		assertThat(this.store.holders("exports", "acme").count()).isEqualTo(2);
	}

	@Test
	void aLeakyBucketSlotIsWaitedForHoldingThePermit() {
		Bucket smooth = Bucket.of("exports", LimitSpec.of(10, "1s", Algorithm.LEAKY_BUCKET));
		ConcurrencyLimiter limiter = limiter("exports", 5, OnStoreFailure.LOCAL);
		this.acquirer.acquireHolding(PermitRequest.of(smooth, "acme", 1), limiter);
		Acquirer.Holding second = this.acquirer.acquireHolding(PermitRequest.of(smooth, "acme", 1), limiter);
		assertThat(second.acquisition().granted()).isTrue();
		assertThat(this.waiter.sleeps()).containsExactly(100_000L);
		assertThat(second.permit().acquired()).isTrue();
	}

	@Test
	void aRequestThatWaitsForPermitsTakesItsPermitAndItsDecisionInTwoCalls() {
		PermitRequest waiting = new PermitRequest(this.exports, "acme", this.exports.limits(), 1,
				WaitPolicy.waitUpTo(Duration.ofSeconds(1)));
		ConcurrencyLimiter limiter = limiter("exports", 2, OnStoreFailure.LOCAL);
		Acquirer.Holding holding = this.acquirer.acquireHolding(waiting, limiter);
		assertThat(holding.acquisition().granted()).isTrue();
		assertThat(holding.permit().acquired()).isTrue();
		assertThat(this.store.calls()).isEqualTo("decideHolding=0 decide=1 acquire=1");
	}

	@Test
	void theAsynchronousWayTakesTheSame() {
		ConcurrencyLimiter limiter = limiter("exports", 1, OnStoreFailure.LOCAL);
		Acquirer.Holding held = this.acquirer
			.acquireHoldingAsync(PermitRequest.of(this.exports, "acme", 1), limiter, Runnable::run)
			.toCompletableFuture()
			.join();
		Acquirer.Holding refused = this.acquirer
			.acquireHoldingAsync(PermitRequest.of(this.exports, "acme", 1), limiter, Runnable::run)
			.toCompletableFuture()
			.join();
		assertThat(held.acquisition().granted()).isTrue();
		assertThat(held.permit().acquired()).isTrue();
		assertThat(refused.permit().acquired()).isFalse();
		assertThat(refused.acquisition()).isNull();
		assertThat(this.store.calls()).isEqualTo("decideHolding=2 decide=0 acquire=0");
	}

	@Test
	void theAsynchronousWayTakesTwoCallsForARequestThatWaitsAndGivesThePermitBackWhenRejected() {
		PermitRequest waiting = new PermitRequest(this.exports, "acme", this.exports.limits(), 3,
				WaitPolicy.waitUpTo(Duration.ofSeconds(1)));
		ConcurrencyLimiter limiter = limiter("exports", 2, OnStoreFailure.LOCAL);
		Acquirer.Holding first = this.acquirer.acquireHoldingAsync(waiting, limiter, Runnable::run)
			.toCompletableFuture()
			.join();
		assertThat(first.acquisition().granted()).isTrue();
		assertThat(first.permit().acquired()).isTrue();
		Acquirer.Holding second = this.acquirer.acquireHoldingAsync(waiting, limiter, Runnable::run)
			.toCompletableFuture()
			.join();
		assertThat(second.acquisition().granted()).as("3 of 3 taken, and the wait is shorter than a refill").isFalse();
		assertThat(second.permit().held()).isFalse();
		assertThat(this.store.holders("exports", "acme").count()).isEqualTo(1);
		assertThat(this.store.calls()).startsWith("decideHolding=0");
	}

	@Test
	void aCallOfOneRequestOfTheLimitersBucketAndKeyTakesOneStoreCall() {
		ConcurrencyLimiter limiter = limiter("exports", 2, OnStoreFailure.LOCAL);
		Acquirer.Holding holding = this.acquirer.acquireHolding(List.of(PermitRequest.of(this.exports, "acme", 1)),
				limiter, "acme");
		assertThat(holding.acquisition().granted()).isTrue();
		assertThat(holding.permit().acquired()).isTrue();
		assertThat(this.store.calls()).isEqualTo("decideHolding=1 decide=0 acquire=0");
	}

	@Test
	void aPermitOfAnotherKeyIsTakenFirstAndGivenBackWhenTheRateLimitsReject() {
		ConcurrencyLimiter limiter = limiter("exports", 5, OnStoreFailure.LOCAL);
		List<PermitRequest> requests = List.of(PermitRequest.of(this.exports, "acme", 1));
		for (int i = 0; i < 3; i++) {
			Acquirer.Holding holding = this.acquirer.acquireHolding(requests, limiter, "everyone");
			assertThat(holding.acquisition().granted()).isTrue();
			assertThat(holding.permit().acquired()).isTrue();
		}
		assertThat(this.store.holders("exports", "everyone").count()).isEqualTo(3);
		assertThat(this.store.holders("exports", "acme").count()).isZero();
		Acquirer.Holding rejected = this.acquirer.acquireHolding(requests, limiter, "everyone");
		assertThat(rejected.acquisition().granted()).isFalse();
		assertThat(rejected.permit().held()).isFalse();
		assertThat(this.store.holders("exports", "everyone").count()).as("the rejected call's permit went back")
			.isEqualTo(3);
		assertThat(this.store.calls()).isEqualTo("decideHolding=0 decide=4 acquire=4");
	}

	@Test
	void aCallOfSeveralRequestsTakesThePermitThenEveryRequestAndOneOfNoneThePermitAlone() {
		ConcurrencyLimiter limiter = limiter("exports", 1, OnStoreFailure.LOCAL);
		Bucket pages = Bucket.of("pages", LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW));
		Acquirer.Holding both = this.acquirer.acquireHolding(
				List.of(PermitRequest.of(this.exports, "acme", 1), PermitRequest.of(pages, "acme", 10)), limiter,
				"acme");
		assertThat(both.acquisition().results()).hasSize(2);
		assertThat(this.store.calls()).isEqualTo("decideHolding=0 decide=2 acquire=1");
		Acquirer.Holding refused = this.acquirer.acquireHolding(List.of(), limiter, "acme");
		assertThat(refused.acquisition()).as("no permit free: nothing decided").isNull();
		both.permit().release();
		Acquirer.Holding alone = this.acquirer.acquireHolding(List.of(), limiter, "acme");
		assertThat(alone.permit().acquired()).isTrue();
		assertThat(alone.acquisition().granted()).isTrue();
		assertThat(alone.acquisition().results()).isEmpty();
		assertThat(this.store.calls()).isEqualTo("decideHolding=0 decide=2 acquire=3");
	}

	@Test
	void theAsynchronousWayTakesAPermitOfAnotherKeyFirst() {
		ConcurrencyLimiter limiter = limiter("exports", 1, OnStoreFailure.LOCAL);
		List<PermitRequest> requests = List.of(PermitRequest.of(this.exports, "acme", 1));
		Acquirer.Holding held = this.acquirer.acquireHoldingAsync(requests, limiter, "everyone", Runnable::run)
			.toCompletableFuture()
			.join();
		Acquirer.Holding refused = this.acquirer.acquireHoldingAsync(requests, limiter, "everyone", Runnable::run)
			.toCompletableFuture()
			.join();
		assertThat(held.acquisition().granted()).isTrue();
		assertThat(held.permit().acquired()).isTrue();
		assertThat(refused.acquisition()).isNull();
		assertThat(this.store.calls()).isEqualTo("decideHolding=0 decide=1 acquire=2");
	}

	@Test
	void anAnswerThatCameTooLateIsAskedAgainForTheSameHolderAndDecidesOnce() {
		this.store.answerTooLate(1);
		ConcurrencyLimiter limiter = limiter("exports", 2, OnStoreFailure.REJECT);
		Acquirer.Holding holding = this.acquirer.acquireHolding(PermitRequest.of(this.exports, "acme", 1), limiter);
		assertThat(holding.acquisition().granted()).isTrue();
		assertThat(this.store.calls()).isEqualTo("decideHolding=2 decide=0 acquire=0");
		assertThat(this.store.peek("exports", "acme", this.exports.limits()).remaining()).isEqualTo(2);
		assertThat(this.store.holders("exports", "acme").count()).isEqualTo(1);
	}

	@Test
	void whileTheStoreFailsThePermitIsCountedInThisJvmAndTheRequestDecidedOnItsOwn() {
		this.store.fail();
		ConcurrencyLimiter limiter = limiter("exports", 2, OnStoreFailure.LOCAL);
		Acquirer.Holding holding = this.acquirer.acquireHolding(PermitRequest.of(this.exports, "acme", 1), limiter);
		assertThat(holding.permit().acquired()).isTrue();
		assertThat(holding.acquisition().granted()).isTrue();
		assertThat(this.store.calls()).isEqualTo("decideHolding=1 decide=1 acquire=0");
		assertThat(this.store.holders("exports", "acme").count()).isZero();
		holding.permit().release();
	}

	@Test
	void whenTheFailureModeRejectsTheFailureReachesTheCallerAndTheObservers() {
		this.store.fail();
		ConcurrencyLimiter limiter = limiter("exports", 2, OnStoreFailure.REJECT);
		assertThatExceptionOfType(StoreUnavailableException.class)
			.isThrownBy(() -> this.acquirer.acquireHolding(PermitRequest.of(this.exports, "acme", 1), limiter));
		assertThat(this.observer.errors()).hasSize(1);
		assertThat(this.observer.results()).isEmpty();
	}

	private ConcurrencyLimiter limiter(String bucket, int permits, OnStoreFailure onStoreFailure) {
		return new ConcurrencyLimiter(this.store, bucket, new ConcurrencyLimit(permits, Duration.ofSeconds(30)),
				this.renewer, List.of(), onStoreFailure);
	}

}
