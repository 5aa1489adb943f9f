package io.github.ratelimit;

import java.time.Instant;
import java.time.ZoneId;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link CalendarUnit}: where calendar windows start and end, in a time zone, on 2026's
 * daylight saving changes, months of every length and ISO weeks across a year's end.
 */
class CalendarUnitTests {

	@ParameterizedTest
	@CsvSource({ "DAY, Europe/Berlin, 2026-03-29T12:00:00Z, 2026-03-28T23:00:00Z, 2026-03-29T22:00:00Z",
			"DAY, Europe/Berlin, 2026-10-25T12:00:00Z, 2026-10-24T22:00:00Z, 2026-10-25T23:00:00Z",
			"DAY, America/New_York, 2026-03-08T12:00:00Z, 2026-03-08T05:00:00Z, 2026-03-09T04:00:00Z",
			"DAY, America/New_York, 2026-11-01T12:00:00Z, 2026-11-01T04:00:00Z, 2026-11-02T05:00:00Z",
			"WEEK, UTC, 2027-01-03T23:00:00Z, 2026-12-28T00:00:00Z, 2027-01-04T00:00:00Z",
			"WEEK, Europe/Berlin, 2026-03-29T12:00:00Z, 2026-03-22T23:00:00Z, 2026-03-29T22:00:00Z",
			"MONTH, UTC, 2026-02-14T00:00:00Z, 2026-02-01T00:00:00Z, 2026-03-01T00:00:00Z",
			"MONTH, UTC, 2028-02-14T00:00:00Z, 2028-02-01T00:00:00Z, 2028-03-01T00:00:00Z",
			"MONTH, UTC, 2026-04-30T23:59:59Z, 2026-04-01T00:00:00Z, 2026-05-01T00:00:00Z",
			"MONTH, Europe/Berlin, 2026-03-31T22:30:00Z, 2026-03-31T22:00:00Z, 2026-04-30T22:00:00Z",
			"QUARTER, America/New_York, 2026-11-15T12:00:00Z, 2026-10-01T04:00:00Z, 2027-01-01T05:00:00Z",
			"YEAR, Europe/Berlin, 2026-12-31T23:30:00Z, 2026-12-31T23:00:00Z, 2027-12-31T23:00:00Z" })
	void aWindowRunsFromLocalMidnightToTheNextWindowsLocalMidnight(CalendarUnit unit, String zone, String now,
			String start, String end) {
		long startMicros = unit.startMicros(ZoneId.of(zone), micros(now));
		assertThat(startMicros).isEqualTo(micros(start));
		assertThat(unit.endMicros(ZoneId.of(zone), startMicros)).isEqualTo(micros(end));
	}

	@Test
	void aMidnightThatDoesNotExistStartsTheDayAtItsFirstMoment() {
		// Santiago skips from 00:00 to 01:00 on 6 September 2026.
		ZoneId santiago = ZoneId.of("America/Santiago");
		long start = CalendarUnit.DAY.startMicros(santiago, micros("2026-09-06T12:00:00Z"));
		assertThat(start).isEqualTo(micros("2026-09-06T04:00:00Z"));
	}

	@Test
	void unitsParseFromConfigurationInAnyCase() {
		assertThat(CalendarUnit.parse("Month")).isEqualTo(CalendarUnit.MONTH);
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> CalendarUnit.parse("fortnight"))
			.withMessage("'fortnight' is not a calendar unit; use day, week, month, quarter or year");
	}

	@Test
	void aCalendarWindowNeedsAFixedWindowAndAZoneNeedsACalendar() {
		assertThatExceptionOfType(InvalidLimitSpecException.class)
			.isThrownBy(() -> LimitSpec.builder().limit(10).calendar("month").algorithm(Algorithm.TOKEN_BUCKET).build())
			.satisfies((ex) -> assertThat(ex.getField()).isEqualTo("calendar"))
			.withMessageContaining("which only fixed-window does");
		assertThatExceptionOfType(InvalidLimitSpecException.class)
			.isThrownBy(() -> LimitSpec.builder().limit(10).window("1d").zone("Europe/Berlin").build())
			.satisfies((ex) -> assertThat(ex.getField()).isEqualTo("zone"));
		assertThatExceptionOfType(InvalidLimitSpecException.class)
			.isThrownBy(() -> LimitSpec.builder().limit(10).calendar("day").zone("Mars/Olympus_Mons"))
			.satisfies((ex) -> assertThat(ex.getField()).isEqualTo("zone"))
			.withMessageContaining("Mars/Olympus_Mons");
		LimitSpec month = LimitSpec.builder()
			.limit(100_000)
			.calendar("month")
			.zone("Europe/Berlin")
			.algorithm(Algorithm.FIXED_WINDOW)
			.build();
		assertThat(month).hasToString("100000/month (Europe/Berlin) fixed-window");
		assertThat(month.toBuilder().build()).isEqualTo(month);
		assertThat(month.toBuilder().zone("UTC").build()).isNotEqualTo(month);
	}

	@Test
	void everyZoneWithUtcsRulesIsTheDefaultZone() {
		LimitSpec utc = LimitSpec.builder().limit(10).calendar("month").algorithm(Algorithm.FIXED_WINDOW).build();
		assertThat(utc.zone()).isEqualTo(LimitSpec.UTC).hasToString("UTC");
		for (String zone : new String[] { "UTC", "Z", "Etc/UTC", "GMT", "+00:00", " UTC " }) {
			assertThat(utc.toBuilder().zone(zone).build()).as(zone).isEqualTo(utc);
		}
		assertThat(utc.toBuilder().zone("Europe/London").build()).isNotEqualTo(utc);
		assertThat(LimitSpec.builder().limit(10).window("1d").zone("Z").build().zone()).isEqualTo(LimitSpec.UTC);
	}

	private static long micros(String instant) {
		return Instant.parse(instant).toEpochMilli() * 1000L;
	}

}
