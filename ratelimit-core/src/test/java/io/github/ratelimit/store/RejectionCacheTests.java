package io.github.ratelimit.store;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link RejectionCache}: which rejections it answers, for how long, and what
 * makes it forget.
 */
class RejectionCacheTests {

	private static final LimitSpec SPEC = LimitSpec.of(5, Duration.ofSeconds(10), Algorithm.SLIDING_LOG);

	private static final List<LimitSpec> LIMITS = List.of(SPEC);

	private static final long NO_MAX = RateLimitStore.NO_MAX_DELAY;

	private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

	/** Longer than every retry-after here, unless a test says otherwise. */
	private static final Duration MAX_AGE = Duration.ofHours(1);

	private final RejectionCache cache = new RejectionCache(3, MAX_AGE, this.nanos::get);

	private static Decision rejected(long remaining, long retryAfterMicros) {
		return Decision.rejected(SPEC, remaining, 9_000_000, retryAfterMicros);
	}

	private void remember(Decision decision) {
		this.cache.remember("b", "k", LIMITS, 1, NO_MAX, decision, this.cache.token());
	}

	private void advanceMicros(long micros) {
		this.nanos.addAndGet(micros * 1000);
	}

	@Test
	void answersTheSameRequestWithTheRejectionAgedByTheTimePassed() {
		remember(rejected(0, 2_000_000));
		advanceMicros(500_000);
		Decision answer = this.cache.answer("b", "k", LIMITS, 1, NO_MAX);
		assertThat(answer).isNotNull();
		assertThat(answer.allowed()).isFalse();
		assertThat(answer.remaining()).isZero();
		assertThat(answer.limit()).isEqualTo(5);
		assertThat(answer.retryAfterMicros()).isEqualTo(1_500_000);
		assertThat(answer.resetAfterMicros()).isEqualTo(8_500_000);
		assertThat(this.cache.answered()).isEqualTo(1);
	}

	@Test
	void asksTheStoreAgainOnceTheRetryAfterHasPassed() {
		remember(rejected(0, 2_000_000));
		advanceMicros(1_999_999);
		assertThat(this.cache.answer("b", "k", LIMITS, 1, NO_MAX)).isNotNull()
			.extracting(Decision::retryAfterMicros)
			.isEqualTo(1L);
		advanceMicros(1);
		assertThat(this.cache.answer("b", "k", LIMITS, 1, NO_MAX)).isNull();
		assertThat(this.cache.size()).isZero();
	}

	@Test
	void asksTheStoreAgainOnceTheMaxAgeHasPassedBeforeTheRetryAfter() {
		RejectionCache cache = new RejectionCache(3, Duration.ofMillis(500), this.nanos::get);
		cache.remember("b", "k", LIMITS, 1, NO_MAX, rejected(0, 2_000_000), cache.token());
		advanceMicros(499_999);
		assertThat(cache.answer("b", "k", LIMITS, 1, NO_MAX)).isNotNull()
			.extracting(Decision::retryAfterMicros)
			.as("the store's retry-after, aged")
			.isEqualTo(1_500_001L);
		advanceMicros(1);
		assertThat(cache.answer("b", "k", LIMITS, 1, NO_MAX)).as("asked again: another instance may have given back")
			.isNull();
	}

	@Test
	void clearForgetsEveryRejectionAndOneMadeMeanwhile() {
		remember(rejected(0, 2_000_000));
		this.cache.remember("b", "other", LIMITS, 1, NO_MAX, rejected(0, 2_000_000), this.cache.token());
		long token = this.cache.token();
		this.cache.clear();
		assertThat(this.cache.isEmpty()).isTrue();
		this.cache.remember("b", "k", LIMITS, 1, NO_MAX, rejected(0, 2_000_000), token);
		assertThat(this.cache.answer("b", "k", LIMITS, 1, NO_MAX)).as("a decision that raced with the clear").isNull();
	}

	@Test
	void aMaxAgeMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RejectionCache(1, Duration.ZERO))
			.withMessage("maxAge must be positive but was PT0S");
	}

	@Test
	void answersOnlyTheSameRequest() {
		remember(rejected(0, 2_000_000));
		assertThat(this.cache.answer("b", "other", LIMITS, 1, NO_MAX)).isNull();
		assertThat(this.cache.answer("other", "k", LIMITS, 1, NO_MAX)).isNull();
		assertThat(this.cache.answer("b", "k", LIMITS, 2, NO_MAX)).as("another cost").isNull();
		assertThat(this.cache.answer("b", "k", LIMITS, 1, 1000)).as("another delay bound").isNull();
		assertThat(this.cache.answer("b", "k", List.of(LimitSpec.of(6, Duration.ofSeconds(10), Algorithm.SLIDING_LOG)),
				1, NO_MAX))
			.as("changed limits")
			.isNull();
		assertThat(this.cache.answered()).isZero();
	}

	@Test
	void remembersOnlyRejectionsThatCannotChangeBeforeTheirRetryAfter() {
		remember(Decision.allowed(SPEC, 0, 1000, 0));
		remember(rejected(0, Decision.NEVER));
		remember(rejected(0, 2_000_000).withOrigin(Decision.Origin.FALLBACK));
		this.cache.remember("b", "k", LIMITS, 3, NO_MAX, rejected(1, 2_000_000), this.cache.token());
		assertThat(this.cache.size()).as("cost 3 with 1 left: a permit comes back before the retry").isZero();
		this.cache.remember("b", "k", LIMITS, 3, NO_MAX, rejected(2, 2_000_000), this.cache.token());
		assertThat(this.cache.answer("b", "k", LIMITS, 3, NO_MAX)).as("cost 3 with 2 left").isNotNull();
	}

	@Test
	void leakyBucketRejectionsAreNotRemembered() {
		LimitSpec leaky = LimitSpec.of(5, Duration.ofSeconds(10), Algorithm.LEAKY_BUCKET);
		this.cache.remember("b", "k", List.of(leaky), 1, 0, Decision.rejected(leaky, 0, 1000, 1000),
				this.cache.token());
		assertThat(this.cache.size()).isZero();
	}

	@Test
	void severalLimitsAreAnsweredUntilTheFirstOfThemGivesAPermitBack() {
		LimitSpec minute = LimitSpec.of(20, Duration.ofMinutes(1), Algorithm.SLIDING_LOG);
		Decision combined = Decision.combine(List.of(Decision.rejected(SPEC, 0, 9_000_000, 1_000_000),
				Decision.rejected(minute, 0, 50_000_000, 40_000_000)));
		this.cache.remember("b", "k", List.of(SPEC, minute), 1, NO_MAX, combined, this.cache.token());
		advanceMicros(999_999);
		Decision answer = this.cache.answer("b", "k", List.of(SPEC, minute), 1, NO_MAX);
		assertThat(answer).isNotNull();
		assertThat(answer.retryAfterMicros()).isEqualTo(39_000_001);
		assertThat(answer.limits()).extracting(Decision::retryAfterMicros).containsExactly(1L, 39_000_001L);
		advanceMicros(1);
		assertThat(this.cache.answer("b", "k", List.of(SPEC, minute), 1, NO_MAX)).isNull();
	}

	@Test
	void anAllowingDecisionForgetsTheKey() {
		remember(rejected(0, 2_000_000));
		this.cache.remember("b", "k", LIMITS, 1, NO_MAX, Decision.allowed(SPEC, 4, 1000, 0), this.cache.token());
		assertThat(this.cache.answer("b", "k", LIMITS, 1, NO_MAX)).isNull();
	}

	@Test
	void invalidateForgetsTheKeyAndARejectionThatRacedWithIt() {
		remember(rejected(0, 2_000_000));
		long tokenBeforeTheStoreWasAsked = this.cache.token();
		this.cache.invalidate("b", "k");
		assertThat(this.cache.answer("b", "k", LIMITS, 1, NO_MAX)).isNull();
		this.cache.remember("b", "k", LIMITS, 1, NO_MAX, rejected(0, 2_000_000), tokenBeforeTheStoreWasAsked);
		assertThat(this.cache.answer("b", "k", LIMITS, 1, NO_MAX)).as("decided before the refund landed").isNull();
	}

	@Test
	void remembersAtMostMaxEntriesAndMakesRoomFromExpiredOnes() {
		for (String key : List.of("a", "b", "c", "d")) {
			this.cache.remember("b", key, LIMITS, 1, NO_MAX, rejected(0, 1_000_000), this.cache.token());
		}
		assertThat(this.cache.size()).isEqualTo(3);
		assertThat(this.cache.answer("b", "d", LIMITS, 1, NO_MAX)).isNull();
		advanceMicros(1_000_000);
		this.cache.remember("b", "d", LIMITS, 1, NO_MAX, rejected(0, 1_000_000), this.cache.token());
		assertThat(this.cache.size()).isEqualTo(1);
		assertThat(this.cache.answer("b", "d", LIMITS, 1, NO_MAX)).isNotNull();
	}

	@Test
	void rejectsANonPositiveSize() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RejectionCache(0, RejectionCache.DEFAULT_MAX_AGE))
			.withMessageContaining("maxEntries must be at least 1 but was 0");
	}

}
