package io.github.ratelimit.failover;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.spring.FailureMode;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link FailoverRateLimitStore} with a primary store the test switches off and on.
 */
class FailoverRateLimitStoreTests {

	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(3, "1m", Algorithm.FIXED_WINDOW));

	private final SwitchableStore primary = new SwitchableStore();

	private FailoverRateLimitStore store(FailureMode mode) {
		CircuitBreaker breaker = CircuitBreaker.of("test",
				CircuitBreakerConfig.custom()
					.slidingWindowSize(10)
					.minimumNumberOfCalls(5)
					.failureRateThreshold(50)
					.waitDurationInOpenState(Duration.ofMillis(200))
					.permittedNumberOfCallsInHalfOpenState(2)
					.recordExceptions(RateLimitStoreException.class)
					.build());
		return new FailoverRateLimitStore(this.primary, InMemoryRateLimitStore.create(), mode, breaker);
	}

	@Test
	void whilePrimaryWorksItDecides() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		for (int i = 0; i < 3; i++) {
			assertThat(store.decide("b", "k", LIMITS, 1).allowed()).isTrue();
		}
		assertThat(store.decide("b", "k", LIMITS, 1).allowed()).isFalse();
		assertThat(this.primary.calls.get()).isEqualTo(4);
		assertThat(store.isDegraded()).isFalse();
	}

	@Test
	void fallbackEnforcesTheSameLimitsPerInstanceAndStopsCallingTheFailingStore() {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		this.primary.up.set(false);
		int allowed = 0;
		for (int i = 0; i < 10; i++) {
			if (store.decide("b", "k", LIMITS, 1).allowed()) {
				allowed++;
			}
		}
		assertThat(allowed).as("the fallback store enforces the limit").isEqualTo(3);
		assertThat(store.isDegraded()).isTrue();
		assertThat(this.primary.calls.get()).as("the breaker opened after 5 failures").isEqualTo(5);
		assertThat(store.failureCount()).isEqualTo(5);
	}

	@Test
	void whenThePrimaryComesBackItTakesOverAfterTheProbes() throws Exception {
		FailoverRateLimitStore store = store(FailureMode.FALLBACK);
		this.primary.up.set(false);
		for (int i = 0; i < 6; i++) {
			store.decide("b", "k", LIMITS, 1);
		}
		assertThat(store.isDegraded()).isTrue();
		this.primary.up.set(true);
		Thread.sleep(300);
		store.decide("b", "probe", LIMITS, 1);
		assertThat(store.isDegraded()).as("half-open: one probe of two succeeded").isTrue();
		store.decide("b", "probe", LIMITS, 1);
		assertThat(store.isDegraded()).isFalse();
		assertThat(store.status().degraded()).isFalse();
		int before = this.primary.calls.get();
		store.decide("b", "other", LIMITS, 1);
		assertThat(this.primary.calls.get()).isEqualTo(before + 1);
	}

	@Test
	void openModeAllowsEverythingWhileThePrimaryFails() {
		FailoverRateLimitStore store = store(FailureMode.OPEN);
		this.primary.up.set(false);
		for (int i = 0; i < 20; i++) {
			Decision decision = store.decide("b", "k", LIMITS, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.limit()).isEqualTo(3);
		}
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
			if (store.decideAsync("b", "k", LIMITS, 1, Long.MAX_VALUE).toCompletableFuture().get().allowed()) {
				allowed++;
			}
		}
		assertThat(allowed).isEqualTo(3);
		assertThat(store.failureCount()).isEqualTo(5);
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
	 * An in-memory store that fails like an unreachable Redis when switched off.
	 */
	static final class SwitchableStore implements RateLimitStore {

		final AtomicBoolean up = new AtomicBoolean(true);

		final AtomicInteger calls = new AtomicInteger();

		private final InMemoryRateLimitStore delegate = InMemoryRateLimitStore.create();

		private void check() {
			this.calls.incrementAndGet();
			if (!this.up.get()) {
				throw new RateLimitStoreException("Redis did not answer within 100ms", null, true);
			}
		}

		@Override
		public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
			check();
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
