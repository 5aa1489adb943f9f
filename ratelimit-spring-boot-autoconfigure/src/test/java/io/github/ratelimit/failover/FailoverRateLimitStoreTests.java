package io.github.ratelimit.failover;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.status.BreakerState;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.status.StoreStatus;
import io.github.ratelimit.store.PartialStoreOutageException;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreReconnectedException;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link FailoverRateLimitStore} with a primary store the test switches off and on.
 */
class FailoverRateLimitStoreTests {

	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(3, "1h", Algorithm.SLIDING_LOG));

	private static final BreakerSettings BREAKER = new BreakerSettings(Duration.ofSeconds(1), 50,
			Duration.ofMillis(200), 2);

	/**
	 * Write-backs (FailoverOutageTests) never run here: calls on a thread of their own
	 * would race with the breaker these tests drive on a clock of their own.
	 */
	private static final ScheduledExecutorService NO_WRITE_BACKS = Executors.newSingleThreadScheduledExecutor();

	static {
		NO_WRITE_BACKS.shutdown();
	}

	private final SwitchableStore primary = new SwitchableStore();

	private final InMemoryRateLimitStore fallback = InMemoryRateLimitStore.create();

	private long now = TimeUnit.HOURS.toNanos(1);

	private FailoverRateLimitStore store(FailureMode mode) {
		return store(mode, 1);
	}

	private FailoverRateLimitStore store(FailureMode mode, int instances) {
		return FailoverRateLimitStore.builder(this.primary, this.fallback)
			.failureMode(mode)
			.breaker(BREAKER)
			.instances(instances)
			.nanoTime(() -> this.now)
			.writer(NO_WRITE_BACKS)
			.build();
	}

	private void advance(long millis) {
		this.now += TimeUnit.MILLISECONDS.toNanos(millis);
	}

	/**
	 * Fails calls for a whole breaker window, so that the breaker opens: each on a key of
	 * its own, since a key decided by the fallback stays there until written back.
	 */
	private void failUntilOpen(FailoverRateLimitStore store) {
		this.primary.up.set(false);
		int opener = 0;
		while (store.circuitBreaker().state() == BreakerState.CLOSED) {
			store.decide("b", "opener-" + opener++, LIMITS, 1);
			advance(100);
		}
	}

	@Test
	void aPartialOutageLeavesTheBreakerClosedAndOtherKeysOnTheStoreAndShowsInTheStatus() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		this.primary.partlyDown = "dead-";
		for (int i = 0; i < 30; i++) {
			assertThat(store.decide("b", "dead-" + i, LIMITS, 1).origin()).isEqualTo(Decision.Origin.FALLBACK);
			assertThat(store.decide("b", "ok-" + i, LIMITS, 1).origin()).isEqualTo(Decision.Origin.STORE);
			advance(100);
		}
		assertThat(store.status()).extracting(StoreStatus::degraded, StoreStatus::breaker, StoreStatus::lastFailure)
			.containsExactly(true, BreakerState.CLOSED,
					"Redis Cluster master 127.0.0.1:7000 of the key's slot is down");
		this.primary.partlyDown = null;
		advance(FailoverRateLimitStore.PARTIAL_OUTAGE_SHOWN.toMillis());
		assertThat(store.decide("b", "dead-0", LIMITS, 1).origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(store.status().degraded()).isFalse();
	}

	@Test
	void aHeartbeatOnAMasterThatIsDownDoesNotHoldBackTheOtherKeys() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		// The fleet's keys are on the Redis Cluster master that is down.
		store.checkDataWith(() -> store.heartbeatFailed(new PartialStoreOutageException(
				"Redis Cluster master 127.0.0.1:7000 of the key's slot is down", null)));
		this.primary.up.set(false);
		assertThat(store.decide("b", "k", LIMITS, 1).origin()).isEqualTo(Decision.Origin.FALLBACK);
		this.primary.up.set(true);
		advance(100);
		assertThat(store.decide("b", "other", LIMITS, 1).origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(store.status().degraded()).as("the heartbeat failed").isTrue();
	}

	@Test
	void whilePrimaryWorksItDecides() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		for (int i = 0; i < 3; i++) {
			Decision decision = store.decide("b", "k", LIMITS, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.origin()).isEqualTo(Decision.Origin.STORE);
		}
		assertThat(store.decide("b", "k", LIMITS, 1).allowed()).isFalse();
		assertThat(this.primary.calls.get()).isEqualTo(4);
		assertThat(store.isDegraded()).isFalse();
		assertThat(store.status().breaker()).isEqualTo(BreakerState.CLOSED);
	}

	@Test
	void fallbackEnforcesTheSameLimitsPerInstanceAndMarksItsDecisions() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		this.primary.up.set(false);
		int allowed = 0;
		for (int i = 0; i < 10; i++) {
			Decision decision = store.decide("b", "k", LIMITS, 1);
			assertThat(decision.origin()).isEqualTo(Decision.Origin.FALLBACK);
			if (decision.allowed()) {
				allowed++;
			}
		}
		assertThat(allowed).as("the fallback store enforces the limit").isEqualTo(3);
		assertThat(store.isDegraded()).as("the last call failed").isTrue();
		assertThat(store.status().breaker()).as("a failure in one burst").isEqualTo(BreakerState.CLOSED);
		assertThat(this.primary.calls.get())
			.as("the first call tried the store; the key then stays on the fallback until written back")
			.isEqualTo(1);
		assertThat(store.failureCount()).isEqualTo(1);
	}

	@Test
	void sustainedFailureOpensTheBreakerAndCallsStopTryingTheStore() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		failUntilOpen(store);
		int calls = this.primary.calls.get();
		assertThat(calls).as("calls that tried the store over the 1s window").isEqualTo(11);
		for (int i = 0; i < 10; i++) {
			store.decide("b", "k", LIMITS, 1);
		}
		assertThat(this.primary.calls.get()).isEqualTo(calls);
		assertThat(store.status()).extracting(StoreStatus::degraded, StoreStatus::breaker)
			.containsExactly(true, BreakerState.OPEN);
	}

	@Test
	void whenThePrimaryComesBackItTakesOverAfterTheProbes() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		failUntilOpen(store);
		this.primary.up.set(true);
		advance(200);
		assertThat(store.decide("b", "probe", LIMITS, 1).origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(store.isDegraded()).as("half-open: one probe of two succeeded").isTrue();
		assertThat(store.decide("b", "probe", LIMITS, 1).origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(store.isDegraded()).isFalse();
		assertThat(store.status().degraded()).isFalse();
		int before = this.primary.calls.get();
		store.decide("b", "other", LIMITS, 1);
		assertThat(this.primary.calls.get()).isEqualTo(before + 1);
	}

	@Test
	void aProbeShowsARecoveryThatNoRequestHasSeen() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		this.primary.up.set(false);
		store.decide("b", "k", LIMITS, 1);
		assertThat(store.status().degraded()).isTrue();
		assertThat(store.probe().degraded()).as("still down").isTrue();
		this.primary.up.set(true);
		assertThat(store.status().degraded()).as("no request since").isTrue();
		assertThat(store.probe().degraded()).isFalse();
		failUntilOpen(store);
		this.primary.up.set(true);
		advance(200);
		assertThat(store.probe().breaker()).as("one of two probes").isEqualTo(BreakerState.HALF_OPEN);
		assertThat(store.probe().breaker()).isEqualTo(BreakerState.CLOSED);
		assertThat(store.status().degraded()).isFalse();
	}

	@Test
	void aRefundGoesToTheStoreThatTookThePermits() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		Decision byStore = store.decide("b", "k", LIMITS, 1);
		this.primary.up.set(false);
		Decision byFallback = store.decide("b", "k", LIMITS, 1);
		assertThat(byFallback.origin()).isEqualTo(Decision.Origin.FALLBACK);
		this.primary.up.set(true);
		int calls = this.primary.calls.get();
		store.refund("b", "k", LIMITS, 1, byFallback);
		assertThat(this.primary.calls.get()).as("the store never took it").isEqualTo(calls);
		assertThat(this.fallback.peek("b", "k", LIMITS).remaining())
			.as("the fallback started from the 2 the store had left")
			.isEqualTo(2);
		assertThat(this.primary.peekWithoutCounting("b", "k", LIMITS).remaining()).isEqualTo(2);
		store.refund("b", "k", LIMITS, 1, byStore);
		assertThat(this.primary.peekWithoutCounting("b", "k", LIMITS).remaining()).isEqualTo(3);
	}

	@Test
	void aRefundTheStoreCannotTakeIsDroppedNotGivenToTheFallback() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		Decision byStore = store.decide("b", "k", LIMITS, 1);
		this.primary.up.set(false);
		for (int i = 0; i < 3; i++) {
			store.decide("b", "k", LIMITS, 1);
		}
		store.refund("b", "k", LIMITS, 1, byStore);
		assertThat(this.fallback.peek("b", "k", LIMITS).remaining()).as("still spent in the fallback").isZero();
	}

	@Test
	void instancesDivideTheFallbackLimits() {
		List<LimitSpec> twenty = List.of(LimitSpec.of(20, "1h", Algorithm.SLIDING_LOG));
		FailoverRateLimitStore store = store(FailureMode.FALLBACK, 3);
		assertThat(store.instances()).isEqualTo(3);
		this.primary.up.set(false);
		int allowed = 0;
		Decision last = null;
		for (int i = 0; i < 20; i++) {
			last = store.decide("b", "k", twenty, 1);
			if (last.allowed()) {
				allowed++;
			}
		}
		assertThat(allowed).as("this instance's share: ceil(20 / 3)").isEqualTo(7);
		assertThat(last.limit()).isEqualTo(7);
		Decision admitted = store.decide("b", "other", twenty, 1);
		store.refund("b", "other", twenty, 1, admitted);
		assertThat(store.peek("b", "other", twenty).remaining()).isEqualTo(7);
	}

	@Test
	void openModeAllowsEverythingAndReportsWhatThisInstanceCounted() {
		FailoverRateLimitStore store = store(FailureMode.OPEN);
		this.primary.up.set(false);
		List<Long> remaining = new java.util.ArrayList<>();
		for (int i = 0; i < 5; i++) {
			Decision decision = store.decide("b", "k", LIMITS, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.limit()).isEqualTo(3);
			assertThat(decision.origin()).isEqualTo(Decision.Origin.FALLBACK);
			remaining.add(decision.remaining());
		}
		assertThat(remaining).containsExactly(2L, 1L, 0L, 0L, 0L);
	}

	@Test
	void closedModeRejectsWithStoreUnavailableWhileThePrimaryFails() {
		FailoverRateLimitStore store = store(FailureMode.CLOSED);
		this.primary.up.set(false);
		for (int i = 0; i < 10; i++) {
			assertThatExceptionOfType(StoreUnavailableException.class)
				.isThrownBy(() -> store.decide("b", "k", LIMITS, 1))
				.withMessageContaining("ratelimit.failure-mode is closed");
		}
	}

	@Test
	void asynchronousDecisionsFallBackToo() throws Exception {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		this.primary.up.set(false);
		int allowed = 0;
		for (int i = 0; i < 6; i++) {
			Decision decision = store.decideAsync("b", "k", LIMITS, 1, Long.MAX_VALUE).toCompletableFuture().get();
			assertThat(decision.origin()).isEqualTo(Decision.Origin.FALLBACK);
			if (decision.allowed()) {
				allowed++;
			}
		}
		assertThat(allowed).isEqualTo(3);
		assertThat(store.failureCount()).as("only the first tried the store").isEqualTo(1);
	}

	@Test
	void anAsynchronousDecisionIsAnsweredWhateverItsFallbackThrows() {
		StackOverflowError error = new StackOverflowError();
		SwitchableStore fallback = new SwitchableStore();
		fallback.decisionError = error;
		FailoverRateLimitStore store = FailoverRateLimitStore.builder(this.primary, fallback)
			.failureMode(FailureMode.FALLBACK)
			.breaker(BREAKER)
			.nanoTime(() -> this.now)
			.build();
		this.primary.up.set(false);
		CompletableFuture<Decision> decision = store.decideAsync("b", "k", LIMITS, 1, Long.MAX_VALUE)
			.toCompletableFuture();
		// Thrown where the primary's failure is handled (its I/O thread), the Error
		// reached no one, and this stage never completed.
		assertThat(decision.handle((result, ex) -> ex)).succeedsWithin(Duration.ZERO).isSameAs(error);
	}

	@Test
	void badArgumentsAreNotCountedAsStoreFailures() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		for (int i = 0; i < 10; i++) {
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> store.decide("b", "k", LIMITS, 0));
		}
		assertThat(store.isDegraded()).isFalse();
		assertThat(store.failureCount()).isZero();
	}

	/**
	 * An in-memory store that fails like an unreachable Redis when switched off, and
	 * whose decisions throw {@link #decisionError} when it is set.
	 */
	static class SwitchableStore implements RateLimitStore {

		final AtomicBoolean up = new AtomicBoolean(true);

		final AtomicInteger calls = new AtomicInteger();

		final AtomicInteger writes = new AtomicInteger();

		volatile @Nullable Error decisionError;

		/** Decisions of keys with this prefix fail as a partial outage, when set. */
		volatile @Nullable String partlyDown;

		/**
		 * The next decision fails, not sent, as one that waited while the connection was
		 * made anew, when set.
		 */
		final AtomicBoolean reconnecting = new AtomicBoolean();

		private final InMemoryRateLimitStore delegate = InMemoryRateLimitStore.create();

		Decision peekWithoutCounting(String bucket, String key, List<LimitSpec> limits) {
			return this.delegate.peek(bucket, key, limits);
		}

		private void check() {
			this.calls.incrementAndGet();
			if (!this.up.get()) {
				throw new RateLimitStoreException("Redis did not answer within 100ms", null, true);
			}
		}

		@Override
		public void charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
			write();
			this.delegate.charge(bucket, key, limits, costs);
		}

		@Override
		public boolean restore(String bucket, String key, List<LimitSpec> limits, long[] costs) {
			write();
			return this.delegate.restore(bucket, key, limits, costs);
		}

		/** Write-backs are counted apart from the decisions, which the tests count. */
		private void write() {
			if (!this.up.get()) {
				throw new RateLimitStoreException("Redis did not answer within 100ms", null, true);
			}
			this.writes.incrementAndGet();
		}

		@Override
		public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
			check();
			if (this.reconnecting.getAndSet(false)) {
				throw new StoreReconnectedException("The Redis connection was made anew while the call waited", null);
			}
			String partlyDown = this.partlyDown;
			if (partlyDown != null && key.startsWith(partlyDown)) {
				throw new PartialStoreOutageException("Redis Cluster master 127.0.0.1:7000 of the key's slot is down",
						null);
			}
			Error error = this.decisionError;
			if (error != null) {
				throw error;
			}
			return this.delegate.decide(bucket, key, limits, cost, maxDelayMicros);
		}

		@Override
		public CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
				long maxDelayMicros) {
			try {
				return CompletableFuture.completedFuture(decide(bucket, key, limits, cost, maxDelayMicros));
			}
			catch (RateLimitStoreException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}

		@Override
		public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
			check();
			this.delegate.refund(bucket, key, limits, cost);
		}

		@Override
		public Decision peek(String bucket, String key, List<LimitSpec> limits) {
			check();
			return this.delegate.peek(bucket, key, limits);
		}

		@Override
		public void reset(String bucket, String key, List<LimitSpec> limits) {
			check();
			this.delegate.reset(bucket, key, limits);
		}

		@Override
		public String name() {
			return "switchable";
		}

	}

}
