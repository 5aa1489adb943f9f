package io.github.ratelimit;

import java.time.Duration;
import java.util.regex.Pattern;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Tests for {@link LimitSpec}: validation with messages that name the bad value,
 * defaults, derived values and value semantics.
 */
class LimitSpecTests {

	private static final long DAY_NANOS = Duration.ofDays(1).toNanos();

	@ParameterizedTest
	@ValueSource(longs = { 0, -5 })
	void nonPositiveLimitIsRejectedNamingTheValue(long limit) {
		assertRejectedNaming(() -> LimitSpec.of(limit, "1s", Algorithm.FIXED_WINDOW), "limit", String.valueOf(limit));
	}

	@Test
	void aRejectionNamesTheFieldTheReasonTheValueAndTheHintApart() {
		assertThatExceptionOfType(InvalidLimitSpecException.class)
			.isThrownBy(() -> LimitSpec.of(2_000_000, "1m", Algorithm.SLIDING_LOG))
			.satisfies((ex) -> {
				assertThat(ex.getField()).isEqualTo("limit");
				assertThat(ex.getReason())
					.isEqualTo("must be at most 1000000 with sliding-log (it keeps one entry per permit)");
				assertThat(ex.getValue()).isEqualTo("2000000");
				assertThat(ex.getHint()).isEqualTo("use sliding-window-counter for larger limits");
				assertThat(ex.getProblem()).isEqualTo(
						"must be at most 1000000 with sliding-log (it keeps one entry per permit) but was 2000000; use"
								+ " sliding-window-counter for larger limits");
				assertThat(ex).hasMessage("limit " + ex.getProblem());
			});
		assertThatExceptionOfType(InvalidLimitSpecException.class)
			.isThrownBy(() -> LimitSpec.builder().window("1s").build())
			.satisfies((ex) -> {
				assertThat(ex.getField()).isEqualTo("limit");
				assertThat(ex.getValue()).isNull();
				assertThat(ex).hasMessage("limit must be set");
			});
	}

	@Test
	void zeroWindowIsRejectedNamingTheValue() {
		assertRejectedNaming(() -> LimitSpec.of(10, Duration.ZERO, Algorithm.TOKEN_BUCKET), "window", "0ms");
	}

	@Test
	void negativeWindowIsRejectedNamingTheValue() {
		assertRejectedNaming(() -> LimitSpec.of(10, Duration.ofSeconds(-5), Algorithm.TOKEN_BUCKET), "window", "-5s");
	}

	@Test
	void windowUnderOneMillisecondIsRejectedNamingTheValue() {
		assertRejectedNaming(() -> LimitSpec.of(1, Duration.ofNanos(999_000), Algorithm.FIXED_WINDOW), "window",
				"999us");
		assertThat(LimitSpec.of(1, Duration.ofMillis(1), Algorithm.FIXED_WINDOW).windowMicros()).isEqualTo(1000);
	}

	@Test
	void windowWithAFractionOfAMicrosecondIsRejectedNamingTheValue() {
		Duration window = Duration.ofNanos(1_000_500);
		assertRejectedNaming(() -> LimitSpec.of(1, window, Algorithm.FIXED_WINDOW), "window", window.toString());
	}

	@Test
	void missingWindowIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> LimitSpec.builder().limit(10).build())
			.withMessageContaining("window");
	}

	@Test
	void windowTooLongForNanosecondArithmeticIsRejectedAsAnInvalidValue() {
		// 110,000 days is past the ~292 years a long count of nanoseconds can hold.
		Duration window = Duration.ofDays(110_000);
		assertRejectedNaming(() -> LimitSpec.of(1, window, Algorithm.FIXED_WINDOW), "window", "110000d");
	}

	@ParameterizedTest
	@ValueSource(longs = { 0, -3 })
	void nonPositiveBurstIsRejectedNamingTheValue(long burst) {
		assertRejectedNaming(() -> LimitSpec.builder().limit(10).window("1s").burst(burst).build(), "burst",
				String.valueOf(burst));
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 0, -2 })
	void fewerThanTwoSegmentsAreRejectedNamingTheValue(int segments) {
		assertRejectedNaming(() -> LimitSpec.builder()
			.limit(10)
			.window("1m")
			.algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
			.segments(segments)
			.build(), "segments", String.valueOf(segments));
	}

	@Test
	void segmentShorterThanOneMillisecondIsRejectedNamingWindowAndSegments() {
		LimitSpec.Builder builder = LimitSpec.builder()
			.limit(10)
			.window("10ms")
			.algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
			.segments(11);
		assertThatIllegalArgumentException().isThrownBy(builder::build)
			.withMessageContaining("segments")
			.satisfies((ex) -> assertNamesToken(ex.getMessage(), "10ms"))
			.satisfies((ex) -> assertNamesToken(ex.getMessage(), "11"));
		assertThat(builder.segments(10).build().segmentMicros()).isEqualTo(1000);
	}

	@Test
	void segmentLengthOnlyMattersForTheSlidingWindowCounter() {
		assertThatNoException().isThrownBy(() -> LimitSpec.builder()
			.limit(10)
			.window("10ms")
			.algorithm(Algorithm.SLIDING_LOG)
			.segments(11)
			.build());
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET", "GCRA" })
	void moreThanOnePermitPerNanosecondIsRejectedNamingTheLimit(Algorithm algorithm) {
		assertRejectedNaming(() -> LimitSpec.of(1_000_001, "1ms", algorithm), "limit", "1000001");
		LimitSpec onePerNanosecond = LimitSpec.of(1_000_000, "1ms", algorithm);
		assertThat(onePerNanosecond.emissionIntervalMicros()).isZero();
		assertThat(onePerNanosecond.emissionIntervalRemainder()).as("1000 / 1e6 µs").isEqualTo(1000);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET", "GCRA" })
	void burstIntervalOverTwoToThe53NanosecondsIsRejectedNamingTheBurst(Algorithm algorithm) {
		// One permit per day: 2^53 ns is 104.25 days, so a burst of 104 fits and 105 does
		// not.
		long largest = (1L << 53) / DAY_NANOS;
		assertThat(largest).isEqualTo(104);
		LimitSpec.Builder builder = LimitSpec.builder().limit(1).window("1d").algorithm(algorithm);
		assertThat(builder.burst(largest).build().capacity()).isEqualTo(largest);
		assertRejectedNaming(() -> builder.burst(largest + 1).build(), "burst", "105");
	}

	@Test
	void windowPerPermitOverTwoToThe53NanosecondsIsRejectedForBucketAlgorithmsOnly() {
		assertRejectedNaming(() -> LimitSpec.of(1, "105d", Algorithm.GCRA), "window", "105d");
		assertThat(LimitSpec.of(1, "105d", Algorithm.FIXED_WINDOW).windowMicros())
			.isEqualTo(Duration.ofDays(105).toNanos() / 1000);
	}

	@Test
	void unparseableWindowTextIsRejectedNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> LimitSpec.of(10, "1 minute", Algorithm.TOKEN_BUCKET))
			.withMessageContaining("'1 minute'");
	}

	@Test
	void defaultsAreTokenBucketWithBurstEqualToLimitAndTenSegments() {
		LimitSpec spec = LimitSpec.builder().limit(42).window("1m").build();
		assertThat(spec.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
		assertThat(spec.burst()).isEqualTo(42);
		assertThat(spec.segments()).isEqualTo(10).isEqualTo(LimitSpec.DEFAULT_SEGMENTS);
		assertThat(spec.limit()).isEqualTo(42);
		assertThat(spec.window()).isEqualTo(Duration.ofMinutes(1));
	}

	@Test
	void derivedValuesAreComputedFromWindowLimitAndSegments() {
		LimitSpec spec = LimitSpec.builder()
			.limit(7)
			.window("1m")
			.algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
			.segments(7)
			.build();
		assertThat(spec.windowMicros()).isEqualTo(60_000_000L);
		assertThat(spec.emissionIntervalMicros()).as("floor(60e6 / 7)").isEqualTo(8_571_428L);
		assertThat(spec.emissionIntervalRemainder()).as("60e6 mod 7").isEqualTo(4);
		assertThat(spec.segmentMicros()).as("floor(60e6 / 7)").isEqualTo(8_571_428L);
		LimitSpec micros = LimitSpec.of(3, Duration.ofNanos(1_000_001_000), Algorithm.GCRA);
		assertThat(micros.windowMicros()).isEqualTo(1_000_001);
		assertThat(micros.emissionIntervalMicros()).isEqualTo(333_333);
		assertThat(micros.emissionIntervalRemainder()).isEqualTo(2);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void capacityIsTheBurstForBurstAlgorithmsAndTheLimitOtherwise(Algorithm algorithm) {
		LimitSpec spec = LimitSpec.builder().limit(10).window("1s").algorithm(algorithm).burst(25).build();
		assertThat(spec.burst()).isEqualTo(25);
		assertThat(spec.capacity()).isEqualTo(algorithm.usesBurst() ? 25 : 10);
	}

	@Test
	void equalSpecsAreEqualAndHashAlike() {
		LimitSpec spec = LimitSpec.of(100, "1m", Algorithm.GCRA);
		LimitSpec same = LimitSpec.builder()
			.limit(100)
			.window(Duration.ofSeconds(60))
			.algorithm(Algorithm.GCRA)
			.burst(100)
			.build();
		assertThat(spec).isEqualTo(same).hasSameHashCodeAs(same);
		assertThat(spec).isNotEqualTo(null).isNotEqualTo("100/1m gcra");
	}

	@Test
	void specsDifferingInAnyValueAreNotEqual() {
		LimitSpec spec = LimitSpec.builder()
			.limit(100)
			.window("1m")
			.algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
			.burst(100)
			.segments(10)
			.build();
		assertThat(spec).isNotEqualTo(spec.toBuilder().limit(101).build())
			.isNotEqualTo(spec.toBuilder().window("61s").build())
			.isNotEqualTo(spec.toBuilder().algorithm(Algorithm.SLIDING_LOG).build())
			.isNotEqualTo(spec.toBuilder().burst(99).build())
			.isNotEqualTo(spec.toBuilder().segments(12).build());
	}

	@Test
	void toStringShowsLimitWindowAndAlgorithm() {
		assertThat(LimitSpec.of(100, "1m", Algorithm.TOKEN_BUCKET)).hasToString("100/1m token-bucket");
		assertThat(LimitSpec.of(5, "1500ms", Algorithm.FIXED_WINDOW)).hasToString("5/1500ms fixed-window");
	}

	@Test
	void toStringShowsBurstOnlyWhenItAppliesAndDiffersFromTheLimit() {
		LimitSpec.Builder builder = LimitSpec.builder().limit(100).window("1m").burst(150);
		assertThat(builder.algorithm(Algorithm.TOKEN_BUCKET).build()).hasToString("100/1m token-bucket burst=150");
		assertThat(builder.algorithm(Algorithm.LEAKY_BUCKET).build()).hasToString("100/1m leaky-bucket burst=150");
		assertThat(builder.algorithm(Algorithm.FIXED_WINDOW).build()).hasToString("100/1m fixed-window");
		assertThat(builder.algorithm(Algorithm.GCRA).burst(100).build()).hasToString("100/1m gcra");
	}

	@Test
	void toStringShowsSegmentsOnlyForTheSlidingWindowCounter() {
		LimitSpec.Builder builder = LimitSpec.builder().limit(100).window("1h").segments(6);
		assertThat(builder.algorithm(Algorithm.SLIDING_WINDOW_COUNTER).build())
			.hasToString("100/1h sliding-window-counter segments=6");
		assertThat(LimitSpec.of(100, "1h", Algorithm.SLIDING_WINDOW_COUNTER))
			.hasToString("100/1h sliding-window-counter segments=10");
		assertThat(builder.algorithm(Algorithm.SLIDING_WINDOW).build()).hasToString("100/1h sliding-window");
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void toBuilderRoundTripsEveryValue(Algorithm algorithm) {
		LimitSpec spec = LimitSpec.builder().limit(30).window("1m").algorithm(algorithm).burst(45).segments(4).build();
		LimitSpec copy = spec.toBuilder().build();
		assertThat(copy).isEqualTo(spec).isNotSameAs(spec);
		assertThat(copy.burst()).isEqualTo(45);
		assertThat(copy.segments()).isEqualTo(4);
		assertThat(copy.algorithm()).isEqualTo(algorithm);
	}

	@Test
	void changingAToBuilderLeavesTheOriginalUntouched() {
		LimitSpec spec = LimitSpec.of(10, "1s", Algorithm.TOKEN_BUCKET);
		LimitSpec changed = spec.toBuilder().limit(20).window("2s").algorithm(Algorithm.GCRA).build();
		assertThat(changed).hasToString("20/2s gcra burst=10");
		assertThat(spec).hasToString("10/1s token-bucket");
	}

	private static void assertRejectedNaming(ThrowingCallable build, String property, String value) {
		assertThatIllegalArgumentException().isThrownBy(build)
			.withMessageContaining(property)
			.satisfies((ex) -> assertNamesToken(ex.getMessage(), value));
	}

	/**
	 * Asserts that {@code message} holds {@code value} as a whole token, so that "0" is
	 * not found inside "10" nor "5s" inside "-5s".
	 */
	private static void assertNamesToken(String message, String value) {
		assertThat(message).containsPattern("(^|[^\\w.\\-])" + Pattern.quote(value) + "($|[^\\w.])");
	}

}
