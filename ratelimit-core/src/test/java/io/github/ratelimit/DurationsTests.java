package io.github.ratelimit;

import java.time.Duration;
import java.util.stream.Stream;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link Durations}.
 */
class DurationsTests {

	static Stream<Arguments> validDurations() {
		return Stream.of(Arguments.of("500ms", Duration.ofMillis(500)), Arguments.of("10s", Duration.ofSeconds(10)),
				Arguments.of("1m", Duration.ofMinutes(1)), Arguments.of("1h", Duration.ofHours(1)),
				Arguments.of("1d", Duration.ofDays(1)), Arguments.of("250us", Duration.ofNanos(250_000)),
				Arguments.of("0ms", Duration.ZERO), Arguments.of("PT1M", Duration.ofMinutes(1)),
				Arguments.of("P1D", Duration.ofDays(1)), Arguments.of("PT0.5S", Duration.ofMillis(500)),
				Arguments.of("pt1m", Duration.ofMinutes(1)), Arguments.of(" 5s ", Duration.ofSeconds(5)),
				Arguments.of("\t5s\n", Duration.ofSeconds(5)), Arguments.of("500MS", Duration.ofMillis(500)),
				Arguments.of("10S", Duration.ofSeconds(10)), Arguments.of("1M", Duration.ofMinutes(1)),
				Arguments.of("2H", Duration.ofHours(2)), Arguments.of("3D", Duration.ofDays(3)),
				Arguments.of("250US", Duration.ofNanos(250_000)), Arguments.of("-5s", Duration.ofSeconds(-5)));
	}

	@ParameterizedTest(name = "\"{0}\" is {1}")
	@MethodSource("validDurations")
	void parsesUnitsAndIso8601(String text, Duration expected) {
		assertThat(Durations.parse(text)).isEqualTo(expected);
	}

	@ParameterizedTest(name = "\"{0}\"")
	@ValueSource(strings = { "abc", "10x", "ms", "1.5s", "1,5s", "s10", "10 minutes", "-", "P", "PT1X", "5s5" })
	void unparseableTextIsRejectedNamingTheValue(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse(text))
			.withMessageContaining("'" + text + "'");
	}

	@ParameterizedTest(name = "\"{0}\"")
	@ValueSource(strings = { "", "   " })
	void emptyTextIsRejected(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse(text)).withMessageContaining("empty");
	}

	@Test
	void nullIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse(null)).withMessageContaining("null");
	}

	@ParameterizedTest(name = "\"{0}\"")
	@ValueSource(strings = { "99999999999999999999s", "9223372036854775807d", "9223372036854775807us" })
	void numbersTooLargeAreRejectedNamingTheValue(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> Durations.parse(text))
			.withMessageContaining("'" + text + "'");
	}

	static Stream<Arguments> formattedDurations() {
		return Stream.of(Arguments.of(Duration.ofDays(1), "1d"), Arguments.of(Duration.ofDays(7), "7d"),
				Arguments.of(Duration.ofHours(2), "2h"), Arguments.of(Duration.ofHours(25), "25h"),
				Arguments.of(Duration.ofMinutes(1), "1m"), Arguments.of(Duration.ofMinutes(90), "90m"),
				Arguments.of(Duration.ofSeconds(30), "30s"), Arguments.of(Duration.ofSeconds(86_401), "86401s"),
				Arguments.of(Duration.ofMillis(1500), "1500ms"), Arguments.of(Duration.ofMillis(1), "1ms"),
				Arguments.of(Duration.ZERO, "0ms"), Arguments.of(Duration.ofNanos(250_000), "250us"),
				Arguments.of(Duration.ofSeconds(-5), "-5s"));
	}

	@ParameterizedTest(name = "{0} is \"{1}\"")
	@MethodSource("formattedDurations")
	void formatUsesTheLargestUnitThatIsExact(Duration duration, String expected) {
		assertThat(Durations.format(duration)).isEqualTo(expected);
		assertThat(Durations.parse(expected)).isEqualTo(duration);
	}

	@Test
	void formatFallsBackToIso8601BelowOneMicrosecond() {
		Duration duration = Duration.ofNanos(1_500);
		assertThat(Durations.format(duration)).isEqualTo("PT0.0000015S");
		assertThat(Durations.parse(Durations.format(duration))).isEqualTo(duration);
	}

	@Test
	void formatIsTheInverseOfParseForDurationsPastLongNanoseconds() {
		// Parses fine, but is longer than the ~292 years a long count of nanoseconds
		// holds.
		Duration longest = Durations.parse("110000d");
		assertThat(Durations.format(longest)).isEqualTo("110000d");
	}

	@Property
	void parseIsTheInverseOfFormatForAnyNanosecondCount(@ForAll long nanos) {
		Duration duration = Duration.ofNanos(nanos);
		assertThat(Durations.parse(Durations.format(duration))).isEqualTo(duration);
	}

	@Property
	void formatIsTheInverseOfParseForWholeMilliseconds(
			@ForAll @LongRange(min = -1_000_000_000_000L, max = 1_000_000_000_000L) long millis) {
		String text = Durations.format(Duration.ofMillis(millis));
		assertThat(text).matches("-?\\d+(ms|s|m|h|d)");
		assertThat(Durations.format(Durations.parse(text))).isEqualTo(text);
		assertThat(Durations.parse(text).toMillis()).isEqualTo(millis);
	}

	@ParameterizedTest
	@MethodSource("readableDurations")
	void readableRoundsUpToAUnitPeopleRead(Duration duration, String expected) {
		assertThat(Durations.readable(duration)).isEqualTo(expected);
	}

	static Stream<Arguments> readableDurations() {
		return Stream.of(Arguments.of(Duration.ZERO, "0ms"), Arguments.of(Duration.ofNanos(1), "1ms"),
				Arguments.of(Duration.ofNanos(499_016_000), "500ms"), Arguments.of(Duration.ofMillis(499), "499ms"),
				Arguments.of(Duration.ofMillis(1000), "1s"), Arguments.of(Duration.ofMillis(1500), "1.5s"),
				Arguments.of(Duration.ofMillis(1401), "1.5s"), Arguments.of(Duration.ofMillis(59_950), "60s"),
				Arguments.of(Duration.ofSeconds(60), "1m"), Arguments.of(Duration.ofMillis(125_001), "2m6s"),
				Arguments.of(Duration.ofMinutes(90), "1h30m"), Arguments.of(Duration.ofDays(2), "2d"),
				Arguments.of(Duration.ofMillis(-1500), "-1.5s"));
	}

	@Property
	void readableIsRoundedUpByLessThanItsSmallestUnit(
			@ForAll @LongRange(min = 0, max = 10_000_000_000_000L) long micros) {
		Duration duration = Duration.ofNanos(micros * 1000);
		String text = Durations.readable(duration);
		Duration shown;
		Duration unit;
		if (text.endsWith("ms")) {
			shown = Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)));
			unit = Duration.ofMillis(1);
		}
		else if (text.matches("\\d+(\\.\\d)?s")) {
			shown = Duration.ofMillis(Math.round(Double.parseDouble(text.substring(0, text.length() - 1)) * 1000));
			unit = Duration.ofMillis(100);
		}
		else {
			assertThat(text).matches("(\\d+d)?(\\d+h)?(\\d+m)?(\\d+s)?");
			shown = Duration.ZERO;
			java.util.regex.Matcher parts = java.util.regex.Pattern.compile("\\d+[dhms]").matcher(text);
			while (parts.find()) {
				shown = shown.plus(Durations.parse(parts.group()));
			}
			unit = Duration.ofSeconds(1);
		}
		assertThat(shown).isGreaterThanOrEqualTo(duration);
		assertThat(shown.minus(duration)).isLessThan(unit);
	}

}
