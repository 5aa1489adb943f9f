package io.github.ratelimit.concurrency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreUnavailableException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link ConcurrencyLimiter} while its store fails: a slow answer is asked
 * again for the same holder (one permit, not two), and an outage follows the failure
 * mode, counting this instance's share of the permits when it counts locally.
 */
class ConcurrencyLimiterTests {

	private static final ConcurrencyLimit FIVE = new ConcurrencyLimit(5, Duration.ofSeconds(30));

	private final LeaseRenewer renewer = new LeaseRenewer();

	private final InMemoryConcurrencyStore shared = new InMemoryConcurrencyStore();

	@AfterEach
	void stopRenewer() {
		this.renewer.close();
	}

	@Test
	void anAskWhoseAnswerWasLostIsAskedAgainAndTakesOnePermit() {
		// Runs the first ask, then loses its answer: a timeout after the call was sent.
		FailingStore store = new FailingStore(this.shared, 1, true, true);
		ConcurrencyLimiter limiter = limiter(store, OnStoreFailure.LOCAL, 3);
		ConcurrencyPermit permit = limiter.tryAcquire("k");
		assertThat(permit.acquired()).isTrue();
		assertThat(store.asks.get()).isEqualTo(2);
		assertThat(this.shared.holders("b", "k").count()).as("one permit, in the shared store").isEqualTo(1);
		permit.release();
		assertThat(this.shared.holders("b", "k")).isEqualTo(Holders.NONE);
	}

	/**
	 * Three failed asks, fewer than the wait allows: answers that came too late (the ask
	 * was sent), or a dropped connection made again (refused, not sent).
	 */
	@ParameterizedTest(name = "sent: {0}")
	@ValueSource(booleans = { true, false })
	void aWaitingRequestAsksAgainAStoreThatIsLateOrBrieflyUnreachableRatherThanCountLocally(boolean sent)
			throws InterruptedException {
		FailingStore store = new FailingStore(this.shared, 3, sent, false);
		ConcurrencyLimiter limiter = limiter(store, OnStoreFailure.LOCAL, 1);
		ConcurrencyPermit permit = limiter.acquire("k", Duration.ofSeconds(30));
		assertThat(permit.acquired()).isTrue();
		assertThat(store.asks.get()).isEqualTo(4);
		assertThat(this.shared.holders("b", "k").count()).as("in the shared store").isEqualTo(1);
		permit.release();
	}

	@Test
	void aWaitingRequestLeavesAStoreThatStaysUnreachableToTheFailureMode() throws InterruptedException {
		FailingStore store = new FailingStore(this.shared, Integer.MAX_VALUE, false, false);
		ConcurrencyLimiter limiter = limiter(store, OnStoreFailure.LOCAL, 1);
		long started = System.nanoTime();
		ConcurrencyPermit permit = limiter.acquire("k", Duration.ofSeconds(30));
		assertThat(permit.acquired()).as("counted in this JVM").isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).as("well before the wait ends")
			.isLessThan(Duration.ofSeconds(20));
		assertThat(this.shared.holders("b", "k")).isEqualTo(Holders.NONE);
		permit.release();
	}

	@Test
	void aRefusalsRetryEstimateIsWhenAPermitIsLikelyFreeNotWhenALeaseEnds() throws InterruptedException {
		ConcurrencyLimiter limiter = limiter(this.shared, OnStoreFailure.LOCAL, 1);
		List<ConcurrencyPermit> held = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			held.add(limiter.tryAcquire("k"));
		}
		// Before any call ended: the earliest lease end, about the whole 30 s lease.
		assertThat(limiter.tryAcquire("k").decision().retryAfter()).isGreaterThan(Duration.ofSeconds(20));
		Thread.sleep(50);
		held.remove(0).release();
		held.add(limiter.tryAcquire("k"));
		// One call held its permit about 50 ms, and 5 are in flight: one likely ends
		// soon.
		Duration estimate = limiter.tryAcquire("k").decision().retryAfter();
		assertThat(estimate).isPositive().isLessThan(Duration.ofSeconds(5));
		held.forEach(ConcurrencyPermit::release);
	}

	@Test
	void anOutageCountsThisInstancesShareOfThePermitsLocally() {
		FailingStore store = new FailingStore(this.shared, Integer.MAX_VALUE, true, false);
		ConcurrencyLimiter limiter = limiter(store, OnStoreFailure.LOCAL, 3);
		ConcurrencyPermit first = limiter.tryAcquire("k");
		ConcurrencyPermit second = limiter.tryAcquire("k");
		ConcurrencyPermit third = limiter.tryAcquire("k");
		assertThat(first.acquired()).isTrue();
		assertThat(second.acquired()).isTrue();
		assertThat(third.acquired()).as("5 permits over 3 instances: 2 each").isFalse();
		assertThat(third.decision().permits()).isEqualTo(2);
		assertThat(store.asks.get()).as("a sent call asked twice, per request").isEqualTo(6);
		first.release();
		assertThat(limiter.tryAcquire("k").acquired()).isTrue();
	}

	@Test
	void thePermitsThisInstanceHoldsInTheStoreCountAgainstItsShareWhileTheStoreFails() {
		FailingStore store = new FailingStore(this.shared, 0, false, false);
		ConcurrencyLimiter limiter = limiter(store, OnStoreFailure.LOCAL, 2);
		ConcurrencyPermit first = limiter.tryAcquire("k");
		ConcurrencyPermit second = limiter.tryAcquire("k");
		assertThat(this.shared.holders("b", "k").count()).isEqualTo(2);
		store.down = true;
		// 5 permits over 2 instances: a share of 3, of which the store holds 2.
		ConcurrencyPermit local = limiter.tryAcquire("k");
		assertThat(local.acquired()).isTrue();
		assertThat(limiter.tryAcquire("k").acquired()).isFalse();
		first.release();
		assertThat(limiter.tryAcquire("k").acquired()).as("one call ended").isTrue();
		assertThat(limiter.tryAcquire("k").acquired()).isFalse();
		second.release();
		local.release();
	}

	@Test
	void aPermitTakenInThisJvmDuringAnOutageMovesToTheStoreAtItsFirstRenewalThatReachesIt() {
		FailingStore store = new FailingStore(this.shared, 0, false, false);
		ConcurrencyLimiter limiter = new ConcurrencyLimiter(store, "b", new ConcurrencyLimit(5, Duration.ofSeconds(1)),
				this.renewer, List.of(), OnStoreFailure.LOCAL, () -> 1);
		for (int i = 0; i < 5; i++) {
			this.shared.acquire("b", "k", FIVE, "another-instance-" + i);
		}
		store.down = true;
		ConcurrencyPermit local = limiter.tryAcquire("k");
		assertThat(local.acquired()).as("counted in this JVM").isTrue();
		assertThat(this.shared.holders("b", "k").count()).isEqualTo(5);
		store.down = false;
		// Renewed every third of its 1 s lease: the store takes it over, over the limit,
		// so that no other instance takes a sixth permit while it runs.
		awaitUpTo30Seconds(() -> this.shared.holders("b", "k").count() == 6);
		assertThat(limiter.tryAcquire("k").acquired()).isFalse();
		for (int i = 0; i < 5; i++) {
			this.shared.release("b", "k", "another-instance-" + i);
		}
		assertThat(local.release()).isTrue();
		assertThat(this.shared.holders("b", "k").count()).as("released in the store").isZero();
		store.down = true;
		ConcurrencyPermit again = limiter.tryAcquire("k");
		assertThat(again.acquired()).as("the instance's share is free again in this JVM").isTrue();
		again.release();
	}

	@Test
	void theFirstAskThatReachesTheStoreAgainCountsThePermitsThisInstanceTookMeanwhile() {
		FailingStore store = new FailingStore(this.shared, 0, false, false);
		ConcurrencyLimiter limiter = limiter(store, OnStoreFailure.LOCAL, 1);
		store.down = true;
		List<ConcurrencyPermit> local = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			local.add(limiter.tryAcquire("k"));
		}
		assertThat(local).allMatch(ConcurrencyPermit::acquired);
		store.down = false;
		// Before any renewal: the store holds none of the 5 and would grant a sixth.
		assertThat(this.shared.holders("b", "k").count()).isZero();
		ConcurrencyPermit sixth = limiter.tryAcquire("k");
		assertThat(sixth.acquired()).as("the 5 counted locally moved to the store first").isFalse();
		assertThat(sixth.decision().inFlight()).isEqualTo(5);
		assertThat(this.shared.holders("b", "k").count()).isEqualTo(5);
		local.get(0).release();
		assertThat(limiter.tryAcquire("k").acquired()).as("one ended").isTrue();
	}

	@Test
	void onceTheStoreAnswersAgainThePermitsOfEveryKeyCountedLocallyMoveBeforeTheirRenewal() {
		FailingStore store = new FailingStore(this.shared, 0, false, false);
		// A lease of a day: the first renewal is 8 hours away.
		ConcurrencyLimiter limiter = new ConcurrencyLimiter(store, "b", new ConcurrencyLimit(5, Duration.ofDays(1)),
				this.renewer, List.of(), OnStoreFailure.LOCAL, () -> 1);
		store.down = true;
		ConcurrencyPermit other = limiter.tryAcquire("other-key");
		assertThat(other.acquired()).isTrue();
		store.down = false;
		assertThat(limiter.tryAcquire("k").acquired()).isTrue();
		awaitUpTo30Seconds(() -> this.shared.holders("b", "other-key").count() == 1);
		assertThat(other.release()).isTrue();
		assertThat(this.shared.holders("b", "other-key").count()).isZero();
	}

	@Test
	void toldThatTheStoreAnswersAgainTheLimiterMovesThePermitsItCountedLocally() {
		FailingStore store = new FailingStore(this.shared, 0, false, false);
		// A lease of a day: no renewal moves them within the test.
		ConcurrencyLimiter limiter = new ConcurrencyLimiter(store, "b", new ConcurrencyLimit(5, Duration.ofDays(1)),
				this.renewer, List.of(), OnStoreFailure.LOCAL, () -> 1);
		store.down = true;
		ConcurrencyPermit local = limiter.tryAcquire("k");
		assertThat(local.acquired()).isTrue();
		store.down = false;
		limiter.storeAnswersAgain();
		awaitUpTo30Seconds(() -> this.shared.holders("b", "k").count() == 1);
		assertThat(local.release()).isTrue();
		assertThat(this.shared.holders("b", "k").count()).isZero();
	}

	@Test
	void aReleaseThatFailsIsMadeAgainUntilTheStoreAnswers() {
		FailingStore store = new FailingStore(this.shared, 0, false, false);
		ConcurrencyLimiter limiter = limiter(store, OnStoreFailure.LOCAL, 1);
		ConcurrencyPermit permit = limiter.tryAcquire("k");
		ConcurrencyPermit other = limiter.tryAcquire("k");
		// A dropped connection: the release fails, and so do the next tries.
		store.down = true;
		assertThat(permit.release()).isFalse();
		assertThat(this.shared.holders("b", "k").count()).isEqualTo(2);
		store.down = false;
		awaitUpTo30Seconds(() -> this.shared.holders("b", "k").count() == 1);
		// Given back once against this instance's share, not once per try: while the
		// store fails, the permit still held in it counts, and 4 of 5 are left here.
		store.down = true;
		List<ConcurrencyPermit> local = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			local.add(limiter.tryAcquire("k"));
		}
		assertThat(local).filteredOn(ConcurrencyPermit::acquired).hasSize(4);
		local.forEach(ConcurrencyPermit::release);
		store.down = false;
		other.release();
		assertThat(this.shared.holders("b", "k")).isEqualTo(Holders.NONE);
	}

	@Test
	void aStoreThatCannotBeReachedIsNotAskedAgain() {
		FailingStore store = new FailingStore(this.shared, Integer.MAX_VALUE, false, false);
		ConcurrencyLimiter limiter = limiter(store, OnStoreFailure.LOCAL, 1);
		assertThat(limiter.tryAcquire("k").acquired()).isTrue();
		assertThat(store.asks.get()).isEqualTo(1);
	}

	@Test
	void anOutageAllowsOrRejectsAsTheFailureModeSays() {
		FailingStore store = new FailingStore(this.shared, Integer.MAX_VALUE, false, false);
		ConcurrencyLimiter open = limiter(store, OnStoreFailure.ALLOW, 1);
		for (int i = 0; i < 10; i++) {
			assertThat(open.tryAcquire("k").acquired()).isTrue();
		}
		ConcurrencyLimiter closed = limiter(store, OnStoreFailure.REJECT, 1);
		assertThatExceptionOfType(StoreUnavailableException.class).isThrownBy(() -> closed.tryAcquire("k"));
	}

	private static void awaitUpTo30Seconds(BooleanSupplier condition) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("waited 30 s").isNegative();
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	private ConcurrencyLimiter limiter(ConcurrencyStore store, OnStoreFailure failure, int instances) {
		return new ConcurrencyLimiter(store, "b", FIVE, this.renewer, List.of(), failure, () -> instances);
	}

	/**
	 * Fails its first {@code failures} acquires, after running them on {@code target}
	 * when {@code runs}, and every call while {@link #down}; passes everything else
	 * through.
	 */
	private static final class FailingStore implements ConcurrencyStore {

		final AtomicInteger asks = new AtomicInteger();

		/** While set, every call fails as one that could not reach the store. */
		volatile boolean down;

		private final ConcurrencyStore target;

		private final int failures;

		private final boolean sent;

		private final boolean runs;

		FailingStore(ConcurrencyStore target, int failures, boolean sent, boolean runs) {
			this.target = target;
			this.failures = failures;
			this.sent = sent;
			this.runs = runs;
		}

		@Override
		public ConcurrencyDecision acquire(String bucket, String key, ConcurrencyLimit limit, String holder) {
			checkUp();
			if (this.asks.incrementAndGet() <= this.failures) {
				if (this.runs) {
					this.target.acquire(bucket, key, limit, holder);
				}
				throw new RateLimitStoreException("no answer within 100ms", null, true, this.sent);
			}
			return this.target.acquire(bucket, key, limit, holder);
		}

		@Override
		public boolean renew(String bucket, String key, ConcurrencyLimit limit, String holder) {
			checkUp();
			return this.target.renew(bucket, key, limit, holder);
		}

		@Override
		public boolean release(String bucket, String key, String holder) {
			checkUp();
			return this.target.release(bucket, key, holder);
		}

		@Override
		public Holders holders(String bucket, String key) {
			checkUp();
			return this.target.holders(bucket, key);
		}

		@Override
		public int releaseAll(String bucket, String key) {
			checkUp();
			return this.target.releaseAll(bucket, key);
		}

		private void checkUp() {
			if (this.down) {
				throw new RateLimitStoreException("connection refused", null, false, false);
			}
		}

	}

}
