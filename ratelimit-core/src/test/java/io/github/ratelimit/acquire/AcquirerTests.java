package io.github.ratelimit.acquire;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.ForwardingRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link Acquirer}: several buckets all or nothing, waits through the waiter in
 * virtual time, shadow mode, refunds and what the observers are told, blocking and
 * asynchronous alike.
 */
class AcquirerTests {

	private static final long START = 1_800_000_000_000_000L;

	private static final long SECOND = 1_000_000L;

	private static final long MILLI = 1_000L;

	/** Three permits, one back every second. */
	private final Bucket three = Bucket.of("three", LimitSpec.of(3, "3s", Algorithm.TOKEN_BUCKET));

	/** One permit a minute. */
	private final Bucket one = Bucket.of("one", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));

	/** A queue of ten slots, one every 100ms. */
	private final Bucket smooth = Bucket.of("smooth", LimitSpec.of(10, "1s", Algorithm.LEAKY_BUCKET));

	private final Bucket shadow = new Bucket("shadow", List.of(LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW)),
			LimitMode.SHADOW);

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

	@Test
	void allowedRequestShouldBeGrantedAndObservedOnce() {
		Acquisition acquisition = this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 1)));
		assertThat(acquisition.granted()).isTrue();
		assertThat(acquisition.results()).singleElement().satisfies((result) -> {
			assertThat(result.outcome()).isEqualTo(Outcome.ALLOWED);
			assertThat(result.key()).isEqualTo("alice");
			assertThat(result.decision().remaining()).isEqualTo(2);
			assertThat(result.storeNanos()).isNotNegative();
		});
		assertThat(this.observer.results()).isEqualTo(acquisition.results());
		assertThat(this.waiter.sleeps()).isEmpty();
	}

	@Test
	void laterRejectionShouldGiveBackWhatEarlierBucketsGrantedAndAskNoFurther() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.one, "", 1)));
		Acquisition acquisition = this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 2),
				PermitRequest.of(this.one, "", 1), PermitRequest.of(this.smooth, "alice", 1)));
		assertThat(acquisition.granted()).isFalse();
		assertThat(acquisition.results()).extracting(RateLimitResult::outcome)
			.containsExactly(Outcome.ALLOWED, Outcome.REJECTED);
		assertThat(acquisition.rejection().bucket()).isEqualTo(this.one);
		assertThat(acquisition.exception()).hasMessageContaining("'one'")
			.satisfies((ex) -> assertThat(ex.getDecision()).isSameAs(acquisition.rejection().decision()));
		assertThat(peek(this.three, "alice").remaining()).as("the permits taken from 'three' are back").isEqualTo(3);
		assertThat(peek(this.smooth, "alice").remaining()).as("never asked").isEqualTo(10);
	}

	@Test
	void grantedAcquisitionShouldHaveNoRejection() {
		Acquisition acquisition = this.acquirer.acquire(List.of(PermitRequest.of(this.three, "", 1)));
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(acquisition::rejection);
	}

	@Test
	void storeFailureShouldGiveBackEarlierPermitsTellTheObserversAndBeRethrown() {
		Acquirer failing = Acquirer.builder(new FailingStore(this.store, "one"))
			.waiter(this.waiter)
			.observer(this.observer)
			.build();
		assertThatExceptionOfType(StoreUnavailableException.class).isThrownBy(() -> failing
			.acquire(List.of(PermitRequest.of(this.three, "alice", 2), PermitRequest.of(this.one, "", 1))));
		assertThat(peek(this.three, "alice").remaining()).isEqualTo(3);
		assertThat(this.observer.errors()).singleElement().isInstanceOf(StoreUnavailableException.class);
	}

	@Test
	void waitingRequestShouldAskAgainAfterTheRetryAfterAndBeObservedAsWaited() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 3)));
		Acquisition acquisition = this.acquirer.acquire(List.of(waitUpTo(this.three, "alice", Duration.ofSeconds(2))));
		assertThat(acquisition.granted()).isTrue();
		assertThat(this.waiter.sleeps()).containsExactly(SECOND);
		assertThat(this.observer.outcomes()).as("one result per request, the rejection before the wait is not one")
			.containsExactly(Outcome.ALLOWED, Outcome.WAITED);
	}

	@Test
	void waitingRequestShouldBeRejectedAtOnceWhenThePermitComesAfterMaxWait() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 3)));
		Acquisition acquisition = this.acquirer.acquire(List.of(waitUpTo(this.three, "alice", Duration.ofMillis(999))));
		assertThat(acquisition.granted()).isFalse();
		assertThat(acquisition.rejection().outcome()).isEqualTo(Outcome.REJECTED);
		assertThat(this.waiter.sleeps()).isEmpty();
	}

	@Test
	void waitingRequestShouldBeRejectedWhenAnotherCallerTookThePermitAndMaxWaitIsUsedUp() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 3)));
		this.waiter.onSleep(() -> this.store.decide("three", "alice", this.three.limits(), 1));
		Acquisition acquisition = this.acquirer
			.acquire(List.of(waitUpTo(this.three, "alice", Duration.ofMillis(1500))));
		assertThat(acquisition.granted()).isFalse();
		assertThat(this.waiter.sleeps()).containsExactly(SECOND);
	}

	@Test
	void eachRequestShouldWaitByItsOwnPolicy() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 3)));
		Acquisition acquisition = this.acquirer.acquire(
				List.of(PermitRequest.of(this.three, "bob", 1), waitUpTo(this.three, "alice", Duration.ofSeconds(5))));
		assertThat(acquisition.results()).extracting(RateLimitResult::outcome)
			.containsExactly(Outcome.ALLOWED, Outcome.WAITED);
		Acquisition rejected = this.acquirer.acquire(
				List.of(waitUpTo(this.three, "bob", Duration.ofSeconds(5)), PermitRequest.of(this.three, "alice", 1)));
		assertThat(rejected.granted()).as("'alice' has no permit and does not wait").isFalse();
		assertThat(peek(this.three, "bob").remaining()).as("the permit of 'bob' is back").isEqualTo(3);
	}

	@Test
	void shadowRejectionShouldProceedWithoutWaitingAndTakeNothing() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.shadow, "", 1)));
		Acquisition acquisition = this.acquirer
			.acquire(List.of(waitUpTo(this.shadow, "", Duration.ofMinutes(5)), PermitRequest.of(this.three, "", 1)));
		assertThat(acquisition.granted()).isTrue();
		assertThat(acquisition.results()).extracting(RateLimitResult::outcome)
			.containsExactly(Outcome.SHADOW_REJECTED, Outcome.ALLOWED);
		assertThat(acquisition.results().get(0).refundable()).isFalse();
		assertThat(this.waiter.sleeps()).isEmpty();
	}

	@Test
	void leakyBucketDelaysShouldBeWaitedOnceForTheLatestSlot() {
		Bucket other = Bucket.of("other", LimitSpec.of(5, "1s", Algorithm.LEAKY_BUCKET));
		this.acquirer.acquire(List.of(PermitRequest.of(this.smooth, "", 1), PermitRequest.of(other, "", 1)));
		assertThat(this.waiter.sleeps()).as("empty queues").isEmpty();
		Acquisition acquisition = this.acquirer
			.acquire(List.of(PermitRequest.of(this.smooth, "", 1), PermitRequest.of(other, "", 1)));
		assertThat(acquisition.results()).extracting((result) -> result.decision().delayMicros())
			.containsExactly(100 * MILLI, 200 * MILLI);
		assertThat(acquisition.results()).extracting(RateLimitResult::outcome).containsOnly(Outcome.ALLOWED);
		assertThat(this.waiter.sleeps()).containsExactly(200 * MILLI);
	}

	@Test
	void leakyBucketDelayLongerThanMaxWaitShouldBeRejectedWithoutTakingASlot() {
		for (int i = 0; i < 3; i++) {
			this.acquirer.tryAcquire(PermitRequest.of(this.smooth, "", 1));
		}
		PermitRequest bounded = new PermitRequest(this.smooth, "", this.smooth.limits(), 1,
				WaitPolicy.reject(Duration.ofMillis(250)));
		assertThat(this.acquirer.acquire(List.of(bounded)).granted()).isFalse();
		assertThat(peek(this.smooth, "").remaining()).isEqualTo(7);
		assertThat(this.waiter.sleeps()).isEmpty();
	}

	@Test
	void tryAcquireShouldNeverWait() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 3)));
		RateLimitResult rejected = this.acquirer.tryAcquire(waitUpTo(this.three, "alice", Duration.ofMinutes(1)));
		assertThat(rejected.outcome()).isEqualTo(Outcome.REJECTED);
		this.acquirer.tryAcquire(PermitRequest.of(this.smooth, "", 1));
		RateLimitResult delayed = this.acquirer.tryAcquire(PermitRequest.of(this.smooth, "", 1));
		assertThat(delayed.decision().delayMicros()).as("the caller's to wait").isEqualTo(100 * MILLI);
		assertThat(this.waiter.sleeps()).isEmpty();
	}

	@Test
	void interruptShouldEndAWaitForAPermitAndStaySet() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 3)));
		Acquirer interrupted = Acquirer.builder(this.store).waiter(new InterruptedWaiter(this.waiter)).build();
		Acquisition acquisition = interrupted.acquire(List.of(waitUpTo(this.three, "alice", Duration.ofSeconds(5))));
		assertThat(acquisition.granted()).isFalse();
		assertThat(Thread.currentThread().isInterrupted()).isTrue();
		assertThat(peek(this.three, "alice").remaining()).isZero();
	}

	@Test
	void interruptShouldNotCutALeakyBucketWaitShort() {
		this.acquirer.tryAcquire(PermitRequest.of(this.smooth, "", 1));
		Acquirer interruptedOnce = Acquirer.builder(this.store).waiter(new InterruptedWaiter(this.waiter, 1)).build();
		Acquisition acquisition = interruptedOnce.acquire(List.of(PermitRequest.of(this.smooth, "", 1)));
		assertThat(acquisition.granted()).isTrue();
		assertThat(this.time.nowMicros()).as("the slot came").isEqualTo(START + 100 * MILLI);
		assertThat(Thread.currentThread().isInterrupted()).as("restored").isTrue();
	}

	@Test
	void refundShouldGiveBackOnlyWhatResultsHold() {
		Acquisition taken = this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 2),
				PermitRequest.of(this.smooth, "alice", 1), PermitRequest.of(this.shadow, "", 1)));
		RateLimitResult rejectedShadow = this.acquirer.tryAcquire(PermitRequest.of(this.shadow, "", 1));
		List<RateLimitResult> results = new ArrayList<>(taken.results());
		results.add(rejectedShadow);
		this.acquirer.refund(results);
		assertThat(peek(this.three, "alice").remaining()).isEqualTo(3);
		assertThat(peek(this.smooth, "alice").remaining()).as("a slot is never given back").isEqualTo(9);
		assertThat(peek(this.shadow, "").remaining()).as("only the allowed one").isEqualTo(1);
	}

	@Test
	void failingRefundShouldBeLoggedNotThrown() {
		Acquisition taken = this.acquirer.acquire(List.of(PermitRequest.of(this.one, "", 1)));
		Acquirer failing = Acquirer.builder(new FailingStore(this.store, "one")).waiter(this.waiter).build();
		failing.refund(taken.results());
		assertThatExceptionOfType(StoreUnavailableException.class).as("the direct API's refund tells its caller")
			.isThrownBy(() -> failing.refund(PermitRequest.of(this.one, "", 1)));
	}

	@Test
	void failingObserverShouldNotStopTheDecisionOrOtherObservers() {
		Acquirer acquirer = Acquirer.builder(this.store).waiter(this.waiter).observer((result) -> {
			throw new IllegalStateException("observer broke");
		}).observer(this.observer).build();
		assertThat(acquirer.acquire(List.of(PermitRequest.of(this.three, "", 1))).granted()).isTrue();
		assertThat(this.observer.results()).hasSize(1);
	}

	@Test
	void asyncAcquisitionShouldWaitForAPermitWithADelayNotASleep() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.three, "alice", 3)));
		CompletableFuture<Acquisition> acquired = this.acquirer
			.acquireAsync(List.of(waitUpTo(this.three, "alice", Duration.ofSeconds(2))))
			.toCompletableFuture();
		assertThat(acquired).isNotDone();
		assertThat(this.waiter.pendingDelays()).containsExactly(SECOND);
		this.waiter.releaseNext();
		assertThat(acquired).isCompletedWithValueMatching(Acquisition::granted);
		assertThat(this.observer.last().outcome()).isEqualTo(Outcome.WAITED);
		assertThat(this.waiter.sleeps()).isEmpty();
	}

	@Test
	void asyncAcquisitionShouldBeAllOrNothing() {
		this.acquirer.acquire(List.of(PermitRequest.of(this.one, "", 1)));
		CompletableFuture<Acquisition> acquired = this.acquirer
			.acquireAsync(List.of(PermitRequest.of(this.three, "alice", 2), PermitRequest.of(this.one, "", 1)))
			.toCompletableFuture();
		assertThat(acquired).isCompletedWithValueMatching((acquisition) -> !acquisition.granted());
		assertThat(peek(this.three, "alice").remaining()).isEqualTo(3);
	}

	@Test
	void asyncAcquisitionShouldWaitTheLeakyBucketDelayWithoutBlocking() {
		this.acquirer.tryAcquire(PermitRequest.of(this.smooth, "", 1));
		CompletableFuture<Acquisition> acquired = this.acquirer
			.acquireAsync(List.of(PermitRequest.of(this.smooth, "", 1)))
			.toCompletableFuture();
		assertThat(acquired).isNotDone();
		assertThat(this.waiter.pendingDelays()).containsExactly(100 * MILLI);
		this.waiter.releaseNext();
		assertThat(acquired).isCompletedWithValueMatching(Acquisition::granted);
	}

	@Test
	void asyncStoreFailureShouldFailTheStageAfterGivingBackEarlierPermits() {
		Acquirer failing = Acquirer.builder(new FailingStore(this.store, "one"))
			.waiter(this.waiter)
			.observer(this.observer)
			.build();
		CompletableFuture<Acquisition> acquired = failing
			.acquireAsync(List.of(PermitRequest.of(this.three, "alice", 2), PermitRequest.of(this.one, "", 1)))
			.toCompletableFuture();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(acquired::get)
			.withCauseInstanceOf(StoreUnavailableException.class);
		assertThat(peek(this.three, "alice").remaining()).isEqualTo(3);
		assertThat(this.observer.errors()).hasSize(1);
	}

	@Test
	void asyncAcquisitionDecidedLaterShouldReachItsCallerWhenTheExecutorIsFull() throws Exception {
		DeferredStore deferred = new DeferredStore(this.store);
		Executor full = (task) -> {
			throw new RejectedExecutionException("full");
		};
		Acquirer acquirer = Acquirer.builder(deferred).waiter(Waiter.system(full, TimeSource.monotonic())).build();
		CompletableFuture<Acquisition> acquired = acquirer.acquireAsync(List.of(PermitRequest.of(this.three, "", 1)))
			.toCompletableFuture();
		assertThat(acquired).isNotDone();
		deferred.complete();
		assertThat(acquired).as("completed on the thread that decided, not failed")
			.isCompletedWithValueMatching(Acquisition::granted);
	}

	@Test
	void asyncAcquisitionDecidedLaterShouldCompleteOnTheExecutor() {
		DeferredStore deferred = new DeferredStore(this.store);
		List<Runnable> executed = new ArrayList<>();
		Executor recording = (task) -> {
			executed.add(task);
			task.run();
		};
		Acquirer acquirer = Acquirer.builder(deferred).waiter(new ExecutorWaiter(this.waiter, recording)).build();
		CompletableFuture<Acquisition> acquired = acquirer.acquireAsync(List.of(PermitRequest.of(this.three, "", 1)))
			.toCompletableFuture();
		assertThat(acquired).isNotDone();
		deferred.complete();
		assertThat(acquired).isCompletedWithValueMatching(Acquisition::granted);
		assertThat(executed).as("handed over to the executor").hasSize(1);
		CompletableFuture<Acquisition> atOnce = Acquirer.builder(this.store)
			.waiter(new ExecutorWaiter(this.waiter, recording))
			.build()
			.acquireAsync(List.of(PermitRequest.of(this.three, "", 1)))
			.toCompletableFuture();
		assertThat(atOnce).as("decided at once: the caller continues on its own thread").isDone();
		assertThat(executed).hasSize(1);
	}

	@Test
	void requestShouldCheckItsCostAndLimits() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> PermitRequest.of(this.three, "alice", 0))
			.withMessageContaining("cost");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> new PermitRequest(this.three, "alice", List.of(), 1, WaitPolicy.REJECT))
			.withMessageContaining("'three'");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> new Bucket("empty", List.of(), LimitMode.ENFORCE))
			.withMessageContaining("'empty'");
	}

	private PermitRequest waitUpTo(Bucket bucket, String key, Duration maxWait) {
		return new PermitRequest(bucket, key, bucket.limits(), 1, WaitPolicy.waitUpTo(maxWait));
	}

	private Decision peek(Bucket bucket, String key) {
		return this.store.peek(bucket.name(), key, bucket.limits());
	}

	/**
	 * Fails every call for one bucket as an unreachable Redis does.
	 */
	private static final class FailingStore extends ForwardingRateLimitStore {

		private final String failingBucket;

		FailingStore(RateLimitStore delegate, String failingBucket) {
			super(delegate);
			this.failingBucket = failingBucket;
		}

		@Override
		public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
			check(bucket);
			return super.decide(bucket, key, limits, cost, maxDelayMicros);
		}

		@Override
		public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
			check(bucket);
			super.refund(bucket, key, limits, cost);
		}

		private void check(String bucket) {
			if (bucket.equals(this.failingBucket)) {
				throw new StoreUnavailableException("store down", new IllegalStateException("down"));
			}
		}

	}

	/**
	 * Answers asynchronous decisions only when the test says so, as a network store's I/O
	 * thread does.
	 */
	private static final class DeferredStore extends ForwardingRateLimitStore {

		private final List<Runnable> pending = new ArrayList<>();

		DeferredStore(RateLimitStore delegate) {
			super(delegate);
		}

		@Override
		public CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
				long maxDelayMicros) {
			CompletableFuture<Decision> future = new CompletableFuture<>();
			this.pending.add(() -> future.complete(decide(bucket, key, limits, cost, maxDelayMicros)));
			return future;
		}

		void complete() {
			this.pending.forEach(Runnable::run);
			this.pending.clear();
		}

	}

	/**
	 * A virtual-time waiter whose sleeps are interrupted, the first {@code times} ones or
	 * all of them; an interrupted sleep does not move the clock.
	 */
	private static final class InterruptedWaiter extends DelegatingWaiter {

		private int times;

		InterruptedWaiter(ManualWaiter delegate) {
			this(delegate, Integer.MAX_VALUE);
		}

		InterruptedWaiter(ManualWaiter delegate, int times) {
			super(delegate, delegate.executor());
			this.times = times;
		}

		@Override
		public void sleep(long micros) throws InterruptedException {
			if (this.times > 0) {
				this.times--;
				throw new InterruptedException("stop");
			}
			super.sleep(micros);
		}

	}

	/**
	 * A virtual-time waiter with another executor.
	 */
	private static final class ExecutorWaiter extends DelegatingWaiter {

		ExecutorWaiter(ManualWaiter delegate, Executor executor) {
			super(delegate, executor);
		}

	}

	private abstract static class DelegatingWaiter implements Waiter {

		private final ManualWaiter delegate;

		private final Executor executor;

		DelegatingWaiter(ManualWaiter delegate, Executor executor) {
			this.delegate = delegate;
			this.executor = executor;
		}

		@Override
		public TimeSource clock() {
			return this.delegate.clock();
		}

		@Override
		public void sleep(long micros) throws InterruptedException {
			this.delegate.sleep(micros);
		}

		@Override
		public CompletionStage<Void> delay(long micros) {
			return this.delegate.delay(micros);
		}

		@Override
		public Executor executor() {
			return this.executor;
		}

	}

}
