package io.github.ratelimit.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.failover.FailoverRateLimitStoreTests.SwitchableStore;
import io.github.ratelimit.status.BreakerState;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a {@link FailoverRateLimitStore} does so that an outage of its primary costs no
 * extra admissions: a key starts on the fallback from what was last heard of it, what the
 * fallback admitted is written back, a primary that lost its data gets the usage heard
 * back, and the heartbeat tells the instances and the resets.
 */
class FailoverOutageTests {

	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(20, "1h", Algorithm.SLIDING_LOG));

	private static final BreakerSettings BREAKER = new BreakerSettings(Duration.ofSeconds(1), 50,
			Duration.ofMillis(200), 2);

	/** Generous: the write-back runs on a thread of its own. */
	private static final Duration WRITE_BACK = Duration.ofSeconds(30);

	private final SwitchableStore primary = new SwitchableStore();

	private final InMemoryRateLimitStore fallback = InMemoryRateLimitStore.create();

	private FailoverRateLimitStore store;

	@AfterEach
	void closeStore() {
		if (this.store != null) {
			this.store.close();
		}
	}

	private FailoverRateLimitStore store(FailureMode mode) {
		this.store = FailoverRateLimitStore.builder(this.primary, this.fallback)
			.failureMode(mode)
			.breaker(BREAKER)
			.build();
		return this.store;
	}

	private static Heartbeat beat(int instances, String epoch, long resets) {
		return new Heartbeat(instances, 0, epoch, resets);
	}

	private static long admitted(FailoverRateLimitStore store, String key, int requests) {
		long admitted = 0;
		for (int i = 0; i < requests; i++) {
			if (store.decide("b", key, LIMITS, 1).allowed()) {
				admitted++;
			}
		}
		return admitted;
	}

	private long primaryRemaining(String key) {
		return this.primary.peekWithoutCounting("b", key, LIMITS).remaining();
	}

	@Test
	void aKeyStartsOnTheFallbackFromWhatRemainedDividedAmongTheInstances() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		store.heartbeat(beat(2, "e", 0));
		assertThat(store.instances()).isEqualTo(2);
		assertThat(admitted(store, "k", 12)).isEqualTo(12);
		this.primary.up.set(false);
		assertThat(admitted(store, "k", 20)).as("half of the 8 that remained").isEqualTo(4);
	}

	@Test
	void aShareOfWhatRemainedIsRoundedDown() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		store.heartbeat(beat(2, "e", 0));
		assertThat(admitted(store, "k", 11)).isEqualTo(11);
		this.primary.up.set(false);
		assertThat(admitted(store, "k", 20)).as("the other instance may have heard less of the 9 that remained")
			.isEqualTo(4);
	}

	@Test
	void aDecisionHeardAfterTheKeyCameToTheFallbackIsTakenToo() {
		List<Runnable> lateAnswers = new ArrayList<>();
		RateLimitStore slowToAnswer = new FailoverRateLimitStoreTests.SwitchableStore() {

			@Override
			public CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
					long maxDelayMicros) {
				Decision decision = decide(bucket, key, limits, cost, maxDelayMicros);
				CompletableFuture<Decision> answer = new CompletableFuture<>();
				lateAnswers.add(() -> answer.complete(decision));
				return answer;
			}

		};
		this.store = FailoverRateLimitStore.builder(slowToAnswer, this.fallback).build();
		this.store.heartbeat(beat(2, "e", 0));
		assertThat(admitted(this.store, "k", 4)).isEqualTo(4);
		for (int i = 0; i < 6; i++) {
			this.store.decideAsync("b", "k", LIMITS, 1, 0);
		}
		((FailoverRateLimitStoreTests.SwitchableStore) slowToAnswer).up.set(false);
		assertThat(this.store.decide("b", "k", LIMITS, 1).origin()).isEqualTo(Decision.Origin.FALLBACK);
		lateAnswers.forEach(Runnable::run);
		assertThat(admitted(this.store, "k", 20)).as("half of the 10 that remained, less the one admitted here")
			.isEqualTo(4);
	}

	@Test
	void aKeyNeverHeardOfStartsWithAFullShare() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		store.heartbeat(beat(2, "e", 0));
		this.primary.up.set(false);
		assertThat(admitted(store, "k", 30)).isEqualTo(10);
	}

	@Test
	void aHeartbeatThatCountsFewerInstancesLowersTheCountOnlyOnceTheOthersAgree() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		store.heartbeat(beat(3, "e", 0));
		// Just after Redis restarted empty, the others have not beaten yet.
		store.heartbeat(beat(1, "e", 0));
		assertThat(store.instances()).isEqualTo(3);
		for (int i = 0; i < 5; i++) {
			store.heartbeat(beat(2, "e", 0));
		}
		assertThat(store.instances()).isEqualTo(2);
	}

	@Test
	void aRequestThatMayHaveRunInThePrimaryCountsThereAndHere() {
		RateLimitStore unknown = new FailoverRateLimitStoreTests.SwitchableStore() {

			@Override
			public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
				super.decide(bucket, key, limits, cost, maxDelayMicros);
				throw new RateLimitStoreException("Redis connection lost after the call was sent", null, false, true);
			}

		};
		this.store = FailoverRateLimitStore.builder(unknown, this.fallback).build();
		assertThat(admitted(this.store, "k", 20)).as("each may also have taken its permit in Redis").isEqualTo(10);
	}

	@Test
	void aKeyWrittenBackThatFailsAgainStartsFromWhatWasWritten() {
		AtomicBoolean decisionsFail = new AtomicBoolean();
		RateLimitStore flaky = new FailoverRateLimitStoreTests.SwitchableStore() {

			@Override
			public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
				if (decisionsFail.get()) {
					throw new RateLimitStoreException("Redis did not answer within 100ms", null, true);
				}
				return super.decide(bucket, key, limits, cost, maxDelayMicros);
			}

		};
		this.store = FailoverRateLimitStore.builder(flaky, this.fallback).build();
		assertThat(admitted(this.store, "k", 4)).isEqualTo(4);
		decisionsFail.set(true);
		assertThat(admitted(this.store, "k", 40)).as("written back between failures, never started afresh")
			.isEqualTo(16);
	}

	@Test
	void aConfiguredInstanceCountWinsOverTheHeartbeats() {
		this.store = FailoverRateLimitStore.builder(this.primary, this.fallback).instances(4).build();
		this.store.heartbeat(beat(2, "e", 0));
		assertThat(this.store.instances()).isEqualTo(4);
	}

	@Test
	void whatTheFallbackAdmittedIsWrittenBackBeforeTheKeyIsDecidedOnThePrimaryAgain() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		assertThat(admitted(store, "k", 3)).isEqualTo(3);
		this.primary.up.set(false);
		assertThat(admitted(store, "k", 5)).isEqualTo(5);
		assertThat(store.pendingWriteBacks()).isEqualTo(1);

		this.primary.up.set(true);
		int writes = this.primary.writes.get();
		Decision next = store.decide("b", "k", LIMITS, 1);
		assertThat(this.primary.writes.get()).as("written back first, on the caller's thread").isEqualTo(writes + 1);
		assertThat(next.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(store.pendingWriteBacks()).isZero();
		assertThat(primaryRemaining("k")).as("3 and then 1 on the primary, 5 written back").isEqualTo(11);
		assertThat(admitted(store, "k", 30)).isEqualTo(11);
	}

	@Test
	void openModeWritesBackEverythingItLetThrough() {
		FailoverRateLimitStore store = store(FailureMode.OPEN);
		this.primary.up.set(false);
		assertThat(admitted(store, "k", 25)).isEqualTo(25);
		this.primary.up.set(true);
		store.heartbeat(beat(1, "e", 0));
		awaitCondition("the write-back", () -> store.pendingWriteBacks() == 0);
		assertThat(primaryRemaining("k")).as("a charge never takes a limit below zero").isZero();
	}

	@Test
	void aRefundOfAFallbackDecisionWrittenBackGoesToThePrimary() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		this.primary.up.set(false);
		Decision admitted = store.decide("b", "k", LIMITS, 2);
		assertThat(admitted.origin()).isEqualTo(Decision.Origin.FALLBACK);
		this.primary.up.set(true);
		store.heartbeat(beat(1, "e", 0));
		awaitCondition("the write-back", () -> store.pendingWriteBacks() == 0);
		assertThat(primaryRemaining("k")).isEqualTo(18);
		store.refund("b", "k", LIMITS, 2, admitted);
		assertThat(primaryRemaining("k")).isEqualTo(20);
	}

	@Test
	void aRefundOfAFallbackDecisionNotYetWrittenBackIsNotWrittenBack() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		this.primary.up.set(false);
		Decision admitted = store.decide("b", "k", LIMITS, 2);
		store.decide("b", "k", LIMITS, 1);
		store.refund("b", "k", LIMITS, 2, admitted);
		this.primary.up.set(true);
		store.heartbeat(beat(1, "e", 0));
		awaitCondition("the write-back", () -> store.pendingWriteBacks() == 0);
		assertThat(primaryRemaining("k")).isEqualTo(19);
	}

	@Test
	void aPrimaryThatLostItsDataGetsTheUsageHeardBack() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		store.heartbeat(beat(1, "before", 0));
		assertThat(admitted(store, "k", 12)).isEqualTo(12);
		this.primary.reset("b", "k", LIMITS);
		assertThat(primaryRemaining("k")).isEqualTo(20);

		store.heartbeat(beat(1, "after", 0));
		awaitCondition("the write-back", () -> store.pendingWriteBacks() == 0);
		assertThat(primaryRemaining("k")).isEqualTo(8);
		assertThat(admitted(store, "k", 20)).isEqualTo(8);
	}

	@Test
	void afterAFailureTheNextDecisionWaitsForTheCheckForLostData() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		AtomicReference<String> epoch = new AtomicReference<>("before");
		AtomicInteger checks = new AtomicInteger();
		store.checkDataWith(() -> {
			checks.incrementAndGet();
			store.heartbeat(beat(1, epoch.get(), 0));
		});
		store.heartbeat(beat(1, "before", 0));
		assertThat(admitted(store, "k", 12)).isEqualTo(12);
		assertThat(checks).as("no failure, no check").hasValue(0);

		// Redis restarts empty; a call on another key sees the failure.
		this.primary.up.set(false);
		store.decide("b", "other", LIMITS, 1);
		this.primary.up.set(true);
		this.primary.reset("b", "k", LIMITS);
		epoch.set("after");

		assertThat(admitted(store, "k", 20)).as("the usage heard was written back first").isEqualTo(8);
		assertThat(checks).hasValue(1);
	}

	@Test
	void aReconnectedPrimaryIsCheckedForLostDataBeforeItDecides() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		store.checkDataWith(() -> store.heartbeat(beat(1, "after", 0)));
		store.heartbeat(beat(1, "before", 0));
		assertThat(admitted(store, "k", 12)).isEqualTo(12);
		this.primary.reset("b", "k", LIMITS);

		store.primaryReconnected();
		assertThat(admitted(store, "k", 20)).isEqualTo(8);
	}

	@Test
	void aCallThatWaitedForANewConnectionIsMadeAgainAfterTheCheckForLostData() {
		FailoverRateLimitStore store = twelveUsedThenRestartedEmptyWhileTheNextCallWaits();
		assertThat(admitted(store, "k", 20)).as("the usage heard was written back first").isEqualTo(8);
		assertThat(store.circuitBreaker().state()).as("not a failure of Redis").isEqualTo(BreakerState.CLOSED);
		assertThat(store.failureCount()).isZero();
	}

	@Test
	void anAsynchronousCallThatWaitedForANewConnectionIsMadeAgainAfterTheCheckForLostData() {
		FailoverRateLimitStore store = twelveUsedThenRestartedEmptyWhileTheNextCallWaits();
		assertThat(store.decideAsync("b", "k", LIMITS, 1, 0).toCompletableFuture().join().allowed()).isTrue();
		awaitCondition("the write-back", () -> store.pendingWriteBacks() == 0);
		assertThat(primaryRemaining("k")).as("the usage heard was written back first").isEqualTo(7);
		assertThat(store.failureCount()).isZero();
	}

	/**
	 * 12 of 20 used; then Redis restarts empty, and the next call waits for the new
	 * connection, and is not sent on it.
	 */
	private FailoverRateLimitStore twelveUsedThenRestartedEmptyWhileTheNextCallWaits() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		AtomicReference<String> epoch = new AtomicReference<>("before");
		store.checkDataWith(() -> store.heartbeat(beat(1, epoch.get(), 0)));
		store.heartbeat(beat(1, "before", 0));
		assertThat(admitted(store, "k", 12)).isEqualTo(12);
		this.primary.reset("b", "k", LIMITS);
		epoch.set("after");
		this.primary.reconnecting.set(true);
		return store;
	}

	@Test
	void aCheckThatFailsSendsTheRequestToTheFailureMode() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		AtomicInteger checks = new AtomicInteger();
		store.checkDataWith(() -> {
			checks.incrementAndGet();
			store.heartbeatFailed(new RateLimitStoreException("Redis did not answer within 100ms", null, true));
		});
		store.primaryReconnected();
		int calls = this.primary.calls.get();
		Decision decision = store.decide("b", "k", LIMITS, 1);
		assertThat(decision.origin()).isEqualTo(Decision.Origin.FALLBACK);
		assertThat(this.primary.calls.get()).as("not sent to a primary that may have lost its data").isEqualTo(calls);
		store.decide("b", "k", LIMITS, 1);
		assertThat(checks).as("not tried again at once").hasValue(1);
	}

	@Test
	void aPrimaryThatLosesItsDataAgainBeforeItWasReadBackGetsTheUsageBackAgain() {
		AtomicBoolean readsFail = new AtomicBoolean();
		SwitchableStore flaky = new SwitchableStore() {

			@Override
			public Decision peek(String bucket, String key, List<LimitSpec> limits) {
				if (readsFail.getAndSet(false)) {
					throw new RateLimitStoreException("Redis refused the connection", null, false);
				}
				return super.peek(bucket, key, limits);
			}

		};
		this.store = FailoverRateLimitStore.builder(flaky, this.fallback).build();
		FailoverRateLimitStore store = this.store;
		store.heartbeat(beat(1, "first", 0));
		assertThat(admitted(store, "k", 12)).isEqualTo(12);

		// Restarted empty: the usage is written back, but Redis goes before it is read
		// back.
		flaky.reset("b", "k", LIMITS);
		readsFail.set(true);
		store.heartbeat(beat(1, "second", 0));
		awaitCondition("the write-back", () -> !readsFail.get());
		// And restarted empty again.
		flaky.reset("b", "k", LIMITS);
		store.heartbeat(beat(1, "third", 0));
		awaitCondition("the write-back", () -> store.pendingWriteBacks() == 0);
		assertThat(flaky.peekWithoutCounting("b", "k", LIMITS).remaining()).isEqualTo(8);
	}

	@Test
	void usageHeardIsNotWrittenOverAKeyThePrimaryHasAgain() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		store.heartbeat(beat(1, "before", 0));
		assertThat(admitted(store, "k", 12)).isEqualTo(12);
		this.primary.reset("b", "k", LIMITS);
		this.primary.decide("b", "k", LIMITS, 1);
		store.heartbeat(beat(1, "after", 0));
		awaitCondition("the write-back", () -> store.pendingWriteBacks() == 0);
		assertThat(primaryRemaining("k")).as("another instance decided on it since").isEqualTo(19);
	}

	@Test
	void aResetThroughAnyInstanceForgetsRejectionsAndUsageHeard() {
		RejectionCache rejections = new RejectionCache(100, Duration.ofHours(1));
		this.store = FailoverRateLimitStore.builder(this.primary, this.fallback).rejectionCache(rejections).build();
		this.store.heartbeat(beat(1, "e", 0));
		assertThat(admitted(this.store, "k", 21)).isEqualTo(20);
		assertThat(rejections.isEmpty()).isFalse();

		// Another instance resets the key.
		this.primary.reset("b", "k", LIMITS);
		this.store.heartbeat(beat(1, "e", 1));
		assertThat(rejections.isEmpty()).isTrue();
		assertThat(this.store.decide("b", "k", LIMITS, 1).allowed()).isTrue();

		// What was heard before the reset is not written back after a data loss: only
		// the one decision since.
		this.primary.reset("b", "k", LIMITS);
		this.store.heartbeat(beat(1, "lost", 1));
		awaitCondition("the write-back", () -> this.store.pendingWriteBacks() == 0);
		assertThat(primaryRemaining("k")).isEqualTo(19);
	}

	@Test
	void theResetCounterLostWithTheDataIsNoReset() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		store.heartbeat(beat(1, "before", 3));
		assertThat(admitted(store, "k", 12)).isEqualTo(12);

		// Restarted empty: the reset counter went with the data, from 3 to 0. No key
		// was reset: the usage heard is written back.
		this.primary.reset("b", "k", LIMITS);
		store.heartbeat(beat(1, "after", 0));
		awaitCondition("the write-back", () -> store.pendingWriteBacks() == 0);
		assertThat(primaryRemaining("k")).isEqualTo(8);
	}

	@Test
	void aFailedHeartbeatDegradesTheStoreWithoutAnyRequest() {
		FailoverRateLimitStore store = store(FailureMode.CLOSED);
		assertThat(store.isDegraded()).isFalse();
		store.heartbeatFailed(new IllegalStateException("Redis is down"));
		assertThat(store.isDegraded()).isTrue();
		store.heartbeat(beat(1, "e", 0));
		assertThat(store.isDegraded()).isFalse();
	}

	@Test
	void aHeartbeatAnsweredClosesTheBreaker() {
		FailoverRateLimitStore store = store(FailureMode.CLOSED);
		this.primary.up.set(false);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (store.circuitBreaker().state() == BreakerState.CLOSED && System.nanoTime() - deadline < 0) {
			assertThatExceptionOfType(StoreUnavailableException.class)
				.isThrownBy(() -> store.decide("b", "opener", LIMITS, 1));
		}
		assertThat(store.circuitBreaker().state()).isEqualTo(BreakerState.OPEN);
		this.primary.up.set(true);
		store.heartbeat(beat(1, "e", 0));
		assertThat(store.circuitBreaker().state()).isEqualTo(BreakerState.CLOSED);
		assertThat(store.decide("b", "k", LIMITS, 1).origin()).isEqualTo(Decision.Origin.STORE);
	}

	private static void awaitCondition(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + WRITE_BACK.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

}
