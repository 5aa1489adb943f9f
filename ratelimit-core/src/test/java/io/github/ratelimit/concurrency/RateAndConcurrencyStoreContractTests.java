package io.github.ratelimit.concurrency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every {@link RateAndConcurrencyStore} does beside the concurrency contract: a
 * request's rate limits decided and its permit taken in one step, as a permit taken first
 * and a decision made after it, with nothing in between, would be. The store under test
 * keeps the permits itself.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public abstract class RateAndConcurrencyStoreContractTests extends ConcurrencyStoreContractTests {

	@Test
	void oneStepTakesThePermitOnlyWhenTheRateLimitAllows() {
		RateAndConcurrencyStore both = both();
		List<LimitSpec> twoAMinute = List.of(LimitSpec.of(2, "1m", Algorithm.FIXED_WINDOW));
		HeldDecision first = both.decideHolding(bucket(), "k", twoAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(),
				THREE, "h1", true);
		assertThat(first.permit().acquired()).isTrue();
		assertThat(first.permit().inFlight()).isEqualTo(1);
		assertThat(first.rate().allowed()).isTrue();
		assertThat(first.rate().remaining()).isEqualTo(1);
		assertThat(both
			.decideHolding(bucket(), "k", twoAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(), THREE, "h2", true)
			.permit()
			.inFlight()).isEqualTo(2);
		HeldDecision third = both.decideHolding(bucket(), "k", twoAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(),
				THREE, "h3", true);
		assertThat(third.rate().allowed()).isFalse();
		assertThat(third.rate().retryAfterMicros()).isEqualTo(60 * SECOND);
		assertThat(third.permit().acquired()).isFalse();
		assertThat(store().holders(bucket(), "k").count()).isEqualTo(2);
		assertThat(store().release(bucket(), "k", "h3")).isFalse();
	}

	@Test
	void oneStepWithNoPermitFreeTakesNothingFromTheRateLimit() {
		RateAndConcurrencyStore both = both();
		ConcurrencyLimit one = new ConcurrencyLimit(1, Duration.ofSeconds(10));
		List<LimitSpec> fiveAMinute = List.of(LimitSpec.of(5, "1m", Algorithm.SLIDING_LOG));
		assertThat(
				both.decideHolding(bucket(), "k", fiveAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(), one, "h1", true)
					.rate()
					.remaining())
			.isEqualTo(4);
		HeldDecision refused = both.decideHolding(bucket(), "k", fiveAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(),
				one, "h2", true);
		assertThat(refused.permit().acquired()).isFalse();
		assertThat(refused.permit().inFlight()).isEqualTo(1);
		assertThat(refused.permit().retryAfterMicros()).isEqualTo(10 * SECOND);
		assertThat(refused.rate()).isNull();
		assertThat(store().release(bucket(), "k", "h1")).isTrue();
		assertThat(
				both.decideHolding(bucket(), "k", fiveAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(), one, "h3", true)
					.rate()
					.remaining())
			.isEqualTo(3);
	}

	@Test
	void oneStepInShadowModeTakesThePermitOfARejectedCall() {
		RateAndConcurrencyStore both = both();
		List<LimitSpec> oneAMinute = List.of(LimitSpec.of(1, "1m", Algorithm.TOKEN_BUCKET));
		both.decideHolding(bucket(), "k", oneAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(), THREE, "h1", false);
		HeldDecision rejected = both.decideHolding(bucket(), "k", oneAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(),
				THREE, "h2", false);
		assertThat(rejected.rate().allowed()).isFalse();
		assertThat(rejected.permit().acquired()).isTrue();
		assertThat(store().holders(bucket(), "k").count()).isEqualTo(2);
	}

	@Test
	void oneStepAskedAgainForItsHolderDecidesNothingTwice() {
		RateAndConcurrencyStore both = both();
		List<LimitSpec> threeAMinute = List.of(LimitSpec.of(3, "1m", Algorithm.GCRA),
				LimitSpec.of(10, "1h", Algorithm.SLIDING_WINDOW_COUNTER));
		HeldDecision first = both.decideHolding(bucket(), "k", threeAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(),
				THREE, "h1", true);
		this.time.advance(Duration.ofMillis(1));
		HeldDecision again = both.decideHolding(bucket(), "k", threeAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(),
				THREE, "h1", true);
		assertThat(again.permit().acquired()).isTrue();
		assertThat(again.permit().inFlight()).isEqualTo(1);
		assertThat(again.rate().allowed()).isTrue();
		assertThat(again.rate().delayMicros()).isZero();
		assertThat(again.rate().remaining()).isEqualTo(first.rate().remaining()).isEqualTo(2);
		assertThat(both
			.decideHolding(bucket(), "k", threeAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(), THREE, "h2", true)
			.rate()
			.remaining()).isEqualTo(1);
	}

	@Test
	void oneStepTakesBackExpiredLeasesFirst() {
		RateAndConcurrencyStore both = both();
		ConcurrencyLimit one = new ConcurrencyLimit(1, Duration.ofSeconds(10));
		List<LimitSpec> tenAMinute = List.of(LimitSpec.of(10, "1m", Algorithm.SLIDING_WINDOW));
		both.decideHolding(bucket(), "k", tenAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(), one, "h1", true);
		this.time.advance(Duration.ofSeconds(10));
		HeldDecision next = both.decideHolding(bucket(), "k", tenAMinute, 1, RateLimitStore.NO_MAX_DELAY, store(), one,
				"h2", true);
		assertThat(next.permit().acquired()).isTrue();
		assertThat(next.permit().expiredLeases()).isEqualTo(1);
		assertThat(next.rate().remaining()).isEqualTo(8);
	}

	@Test
	void oneStepAnswersNothingForPermitsKeptInAnotherStore() {
		assertThat(both().decideHolding(bucket(), "k", List.of(LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW)), 1,
				RateLimitStore.NO_MAX_DELAY, new InMemoryConcurrencyStore(this.time), THREE, "h1", true))
			.isNull();
		assertThat(store().holders(bucket(), "k").count()).isZero();
	}

	@Test
	void oneStepFromManyThreadsAdmitsExactlyTheRateLimitAndNeverHoldsMoreThanThePermits() throws Exception {
		RateAndConcurrencyStore both = both();
		List<LimitSpec> twentyAMinute = List.of(LimitSpec.of(20, "1m", Algorithm.FIXED_WINDOW));
		AtomicInteger inFlight = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger admitted = new AtomicInteger();
		AtomicInteger refusedForPermits = new AtomicInteger();
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				int thread = t;
				done.add(threads.submit(() -> {
					for (int i = 0; i < 25; i++) {
						String holder = "t" + thread + "-" + i;
						HeldDecision decided = both.decideHolding(bucket(), "k", twentyAMinute, 1,
								RateLimitStore.NO_MAX_DELAY, store(), THREE, holder, true);
						if (decided.rate() == null) {
							refusedForPermits.incrementAndGet();
							continue;
						}
						if (decided.permit().acquired()) {
							admitted.incrementAndGet();
							most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
							inFlight.decrementAndGet();
							assertThat(store().release(bucket(), "k", holder)).isTrue();
						}
					}
					return null;
				}));
			}
			for (Future<?> future : done) {
				future.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(admitted.get()).isEqualTo(20);
		assertThat(most.get()).isLessThanOrEqualTo(3);
		assertThat(store().holders(bucket(), "k").count()).isZero();
	}

	private RateAndConcurrencyStore both() {
		return (RateAndConcurrencyStore) store();
	}

}
