package io.github.ratelimit;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link Decision}, in particular how the decisions of several limits combine.
 */
class DecisionTests {

	private final LimitSpec perSecond = LimitSpec.of(10, "1s", Algorithm.TOKEN_BUCKET);

	private final LimitSpec perMinute = LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW);

	private final LimitSpec perHour = LimitSpec.of(1000, "1h", Algorithm.LEAKY_BUCKET);

	@Test
	void allowedDecisionHasNoRetryAfter() {
		Decision decision = Decision.allowed(this.perSecond, 4, 600_000, 0);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.retryable()).isTrue();
		assertThat(decision.limit()).isEqualTo(10);
		assertThat(decision.remaining()).isEqualTo(4);
		assertThat(decision.resetAfter()).isEqualTo(Duration.ofMillis(600));
		assertThat(decision.retryAfterMicros()).isZero();
		assertThat(decision.retryAfter()).isZero();
		assertThat(decision.spec()).isSameAs(this.perSecond);
	}

	@Test
	void rejectedDecisionHasNoDelay() {
		Decision decision = Decision.rejected(this.perSecond, 0, 1_000_000, 1500);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.retryable()).isTrue();
		assertThat(decision.retryAfter()).isEqualTo(Duration.ofNanos(1_500_000));
		assertThat(decision.delayMicros()).isZero();
		assertThat(decision.delay()).isZero();
	}

	@Test
	void remainingAndTimesAreClampedAtZero() {
		Decision allowed = Decision.allowed(this.perSecond, -3, -1, -5);
		assertThat(allowed.remaining()).isZero();
		assertThat(allowed.resetAfterMicros()).isZero();
		assertThat(allowed.delayMicros()).isZero();
		Decision rejected = Decision.rejected(this.perSecond, -1, 0, -7);
		assertThat(rejected.remaining()).isZero();
		assertThat(rejected.retryAfterMicros()).isZero();
	}

	@Test
	void delayIsConvertedFromMicroseconds() {
		Decision decision = Decision.allowed(this.perHour, 10, 0, 3_600_250);
		assertThat(decision.delay()).isEqualTo(Duration.ofSeconds(3).plusNanos(600_250_000));
	}

	@Test
	void combineOfAllowedDecisionsBindsTheLimitWithLeastRemaining() {
		Decision second = Decision.allowed(this.perSecond, 5, 1_000, 0);
		Decision minute = Decision.allowed(this.perMinute, 2, 500, 0);
		Decision hour = Decision.allowed(this.perHour, 7, 3_000, 200);
		Decision combined = Decision.combine(List.of(second, minute, hour));
		assertThat(combined.allowed()).isTrue();
		assertThat(combined.spec()).isSameAs(this.perMinute);
		assertThat(combined.limit()).isEqualTo(100);
		assertThat(combined.remaining()).isEqualTo(2);
		assertThat(combined.resetAfterMicros()).as("longest reset").isEqualTo(3_000);
		assertThat(combined.delayMicros()).as("longest delay").isEqualTo(200);
		assertThat(combined.retryAfterMicros()).isZero();
	}

	@Test
	void combineTakesTheLongestResetAndDelayWhateverLimitBinds() {
		Decision longestReset = Decision.allowed(this.perSecond, 1, 9_000, 0);
		Decision longestDelay = Decision.allowed(this.perHour, 50, 10, 700);
		Decision binding = Decision.allowed(this.perMinute, 0, 20, 100);
		Decision combined = Decision.combine(List.of(longestReset, longestDelay, binding));
		assertThat(combined.spec()).isSameAs(this.perMinute);
		assertThat(combined.remaining()).isZero();
		assertThat(combined.resetAfterMicros()).isEqualTo(9_000);
		assertThat(combined.delayMicros()).isEqualTo(700);
	}

	@Test
	void combineOfMixedDecisionsIsRejectedBoundByTheLongestRetryAfter() {
		Decision exhausted = Decision.allowed(this.perSecond, 0, 1_000_000, 300);
		Decision minute = Decision.rejected(this.perMinute, 0, 9_000, 4_000);
		Decision hour = Decision.rejected(this.perHour, 1, 100, 6_000);
		Decision combined = Decision.combine(List.of(exhausted, minute, hour));
		assertThat(combined.allowed()).isFalse();
		assertThat(combined.spec()).as("the rejection with the longest wait binds, not the least remaining")
			.isSameAs(this.perHour);
		assertThat(combined.limit()).isEqualTo(1000);
		assertThat(combined.remaining()).isEqualTo(1);
		assertThat(combined.retryAfterMicros()).isEqualTo(6_000);
		assertThat(combined.resetAfterMicros()).isEqualTo(1_000_000);
		assertThat(combined.delayMicros()).as("a rejection has no delay").isZero();
	}

	@Test
	void combineWithOneRejectionIsRejectedEvenWhenItIsLast() {
		Decision combined = Decision.combine(List.of(Decision.allowed(this.perSecond, 9, 100, 0),
				Decision.allowed(this.perMinute, 99, 100, 0), Decision.rejected(this.perHour, 0, 100, 50)));
		assertThat(combined.allowed()).isFalse();
		assertThat(combined.spec()).isSameAs(this.perHour);
		assertThat(combined.retryAfterMicros()).isEqualTo(50);
	}

	@Test
	void neverDominatesEveryFiniteRetryAfter() {
		Decision finite = Decision.rejected(this.perSecond, 0, 0, Duration.ofDays(1).toNanos() / 1000);
		Decision never = Decision.rejected(this.perMinute, 0, 0, Decision.NEVER);
		for (List<Decision> decisions : List.of(List.of(finite, never), List.of(never, finite))) {
			Decision combined = Decision.combine(decisions);
			assertThat(combined.retryAfterMicros()).isEqualTo(Decision.NEVER);
			assertThat(combined.retryable()).isFalse();
			assertThat(combined.spec()).isSameAs(this.perMinute);
		}
	}

	@Test
	void limitsHoldEveryDecisionInTheGivenOrder() {
		Decision second = Decision.allowed(this.perSecond, 5, 0, 0);
		Decision minute = Decision.rejected(this.perMinute, 0, 0, 10);
		Decision hour = Decision.allowed(this.perHour, 1, 0, 0);
		List<Decision> decisions = new ArrayList<>(List.of(hour, second, minute));
		Decision combined = Decision.combine(decisions);
		decisions.clear();
		assertThat(combined.limits()).containsExactly(hour, second, minute);
	}

	@Test
	void combineOfOneDecisionReturnsIt() {
		Decision only = Decision.rejected(this.perSecond, 2, 10, 20);
		assertThat(Decision.combine(List.of(only))).isSameAs(only);
		assertThat(only.limits()).containsExactly(only);
	}

	@Test
	void combineOfNoDecisionsIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> Decision.combine(List.of()));
	}

	@Test
	void retryAfterOfNeverIsForever() {
		Decision never = Decision.rejected(this.perSecond, 0, 0, Decision.NEVER);
		assertThat(never.retryAfter()).isEqualTo(ChronoUnit.FOREVER.getDuration());
		assertThat(never.retryable()).isFalse();
		assertThat(never.toString()).contains("retryAfter=never");
	}

	@Test
	void toStringShowsTheValuesAndTheLimitsOfACombination() {
		Decision decision = Decision.rejected(this.perSecond, 3, 2_000_000, 1_500_000);
		assertThat(decision.toString())
			.contains("allowed=false", "limit=10", "remaining=3", "resetAfter=2s", "retryAfter=1.5s", "delay=0ms")
			.doesNotContain("limits=");
		Decision combined = Decision.combine(List.of(decision, Decision.allowed(this.perMinute, 50, 0, 0)));
		assertThat(combined.toString()).contains("limits=[");
	}

	@Test
	void decisionsComeFromTheStoreUnlessMarkedOtherwise() {
		Decision decision = Decision.allowed(this.perSecond, 4, 600_000, 0);
		assertThat(decision.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(decision.withOrigin(Decision.Origin.STORE)).isSameAs(decision);
		Decision fallback = decision.withOrigin(Decision.Origin.FALLBACK);
		assertThat(fallback.origin()).isEqualTo(Decision.Origin.FALLBACK);
		assertThat(fallback).usingRecursiveComparison().ignoringFields("origin").isEqualTo(decision);
		assertThat(fallback.toString()).contains("origin=FALLBACK");
		assertThat(decision.toString()).doesNotContain("origin");
	}

	@Test
	void markingACombinedDecisionMarksEachLimit() {
		Decision combined = Decision.combine(List.of(Decision.allowed(this.perSecond, 4, 600_000, 0),
				Decision.rejected(this.perMinute, 0, 30_000_000, 20_000_000)));
		Decision fallback = combined.withOrigin(Decision.Origin.FALLBACK);
		assertThat(fallback.allowed()).isFalse();
		assertThat(fallback.retryAfterMicros()).isEqualTo(combined.retryAfterMicros());
		assertThat(fallback.limits()).hasSize(2)
			.allSatisfy((limit) -> assertThat(limit.origin()).isEqualTo(Decision.Origin.FALLBACK));
		assertThat(combined.limits())
			.allSatisfy((limit) -> assertThat(limit.origin()).isEqualTo(Decision.Origin.STORE));
	}

	@Test
	void elapsedShortensTheWaitsButNeverPastZeroOrNever() {
		LimitSpec spec = LimitSpec.of(5, Duration.ofSeconds(10), Algorithm.SLIDING_LOG);
		Decision rejected = Decision.rejected(spec, 0, 3_000, 2_000).withOrigin(Decision.Origin.FALLBACK);
		Decision later = rejected.elapsed(2_500);
		assertThat(later.allowed()).isFalse();
		assertThat(later.resetAfterMicros()).isEqualTo(500);
		assertThat(later.retryAfterMicros()).isZero();
		assertThat(later.origin()).isEqualTo(Decision.Origin.FALLBACK);
		assertThat(later.remaining()).isZero();
		assertThat(rejected.elapsed(0)).isSameAs(rejected);
		assertThat(Decision.rejected(spec, 0, 3_000, Decision.NEVER).elapsed(1_000).retryAfterMicros())
			.isEqualTo(Decision.NEVER);
		assertThatIllegalArgumentException().isThrownBy(() -> rejected.elapsed(-1));
	}

	@Test
	void aPenaltyStartedIsMarkedOnceAndCarriedByACombinationButNotByARepetition() {
		Decision started = Decision.rejected(this.perMinute, 0, 900_000_000, 900_000_000).startingPenalty();
		Decision combined = Decision.combine(List.of(Decision.allowed(this.perSecond, 4, 600_000, 0), started));
		assertThat(started.penaltyStarted()).isTrue();
		assertThat(combined.penaltyStarted()).isTrue();
		assertThat(combined.withOrigin(Decision.Origin.FALLBACK).penaltyStarted()).isTrue();
		assertThat(combined.repeated().penaltyStarted()).isFalse();
		assertThat(combined.repeated().limits()).noneMatch(Decision::penaltyStarted);
		assertThat(combined.repeated().retryAfterMicros()).isEqualTo(combined.retryAfterMicros());
		assertThat(started.elapsed(0).penaltyStarted()).as("a cached answer").isFalse();
		assertThat(started.elapsed(1000).penaltyStarted()).isFalse();
		assertThat(Decision.rejected(this.perMinute, 0, 1, 1).penaltyStarted()).isFalse();
		assertThat(started.toString()).contains("penaltyStarted");
		assertThatIllegalStateException()
			.isThrownBy(() -> Decision.allowed(this.perSecond, 4, 600_000, 0).startingPenalty());
	}

}
