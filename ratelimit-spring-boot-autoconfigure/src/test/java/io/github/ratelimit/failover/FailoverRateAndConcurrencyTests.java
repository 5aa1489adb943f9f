package io.github.ratelimit.failover;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.HeldDecision;
import io.github.ratelimit.concurrency.RateAndConcurrencyStore;
import io.github.ratelimit.status.BreakerState;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.ForwardingRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link FailoverRateLimitStore#decideHolding}: one call of the primary while it works,
 * with the bookkeeping of a decision (breaker, remembered rejections), and the permit and
 * the decision asked apart while it does not.
 */
class FailoverRateAndConcurrencyTests {

	private static final List<LimitSpec> TWO = List.of(LimitSpec.of(2, "1h", Algorithm.FIXED_WINDOW));

	private static final ConcurrencyLimit THREE = new ConcurrencyLimit(3, Duration.ofSeconds(30));

	private static final ScheduledExecutorService NO_WRITE_BACKS = Executors.newSingleThreadScheduledExecutor();

	static {
		NO_WRITE_BACKS.shutdown();
	}

	private final InMemoryRateLimitStore memory = InMemoryRateLimitStore.create();

	private final Primary primary = new Primary(this.memory);

	private final FailoverRateLimitStore store = FailoverRateLimitStore
		.builder(this.primary, InMemoryRateLimitStore.create())
		.failureMode(FailureMode.FALLBACK)
		.rejectionCache(new RejectionCache(1000, Duration.ofMinutes(1)))
		.writer(NO_WRITE_BACKS)
		.build();

	@Test
	void whileThePrimaryWorksItDecidesAndTakesThePermitInOneCall() {
		HeldDecision held = decideHolding("h1");
		assertThat(held.permit().acquired()).isTrue();
		assertThat(held.rate().allowed()).isTrue();
		assertThat(this.primary.calls.get()).isEqualTo(1);
		assertThat(this.memory.holders("b", "k").count()).isEqualTo(1);
		assertThat(this.store.circuitBreaker().state()).isEqualTo(BreakerState.CLOSED);
	}

	@Test
	void aRememberedRejectionAnswersWithoutACallAndTakesNoPermit() {
		decideHolding("h1");
		decideHolding("h2");
		assertThat(decideHolding("h3").rate().allowed()).as("the third of two, rejected and remembered").isFalse();
		int calls = this.primary.calls.get();
		HeldDecision remembered = decideHolding("h4");
		assertThat(remembered.rate().allowed()).isFalse();
		assertThat(remembered.permit().acquired()).isFalse();
		assertThat(this.primary.calls.get()).as("no call").isEqualTo(calls);
		assertThat(this.memory.holders("b", "k").count()).isEqualTo(2);
	}

	@Test
	void aFailureIsCountedAndRethrownAndThenThePermitAndTheDecisionAreAskedApart() {
		this.primary.up.set(false);
		assertThatExceptionOfType(RateLimitStoreException.class).isThrownBy(() -> decideHolding("h1"));
		assertThat(this.store.isDegraded()).isTrue();
		this.primary.up.set(true);
		assertThat(decideHolding("h2")).as("degraded: asked apart").isNull();
		assertThat(this.primary.calls.get()).isEqualTo(1);
	}

	@Test
	void permitsKeptInAnotherStoreAreAskedApart() {
		assertThat(this.store.decideHolding("b", "k", TWO, 1, RateLimitStore.NO_MAX_DELAY,
				InMemoryRateLimitStore.create(), THREE, "h1", true))
			.isNull();
		assertThat(this.store.circuitBreaker().state()).isEqualTo(BreakerState.CLOSED);
	}

	private HeldDecision decideHolding(String holder) {
		return this.store.decideHolding("b", "k", TWO, 1, RateLimitStore.NO_MAX_DELAY, this.memory, THREE, holder,
				true);
	}

	/** The memory store, failing like an unreachable Redis when switched off. */
	private static final class Primary extends ForwardingRateLimitStore implements RateAndConcurrencyStore {

		final AtomicBoolean up = new AtomicBoolean(true);

		final AtomicInteger calls = new AtomicInteger();

		private final InMemoryRateLimitStore delegate;

		Primary(InMemoryRateLimitStore delegate) {
			super(delegate);
			this.delegate = delegate;
		}

		@Override
		public @Nullable HeldDecision decideHolding(String bucket, String key, List<LimitSpec> limits, long cost,
				long maxDelayMicros, ConcurrencyStore permits, ConcurrencyLimit limit, String holder,
				boolean enforced) {
			this.calls.incrementAndGet();
			if (!this.up.get()) {
				throw new RateLimitStoreException("Redis did not answer within 100ms", null, true);
			}
			return this.delegate.decideHolding(bucket, key, limits, cost, maxDelayMicros, permits, limit, holder,
					enforced);
		}

	}

}
