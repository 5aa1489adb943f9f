package io.github.ratelimit;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.Locale;

/**
 * A calendar window: a day, an ISO week (from Monday), a month, a quarter or a year, in a
 * time zone. Its boundaries fall at local midnight, so a day across a daylight saving
 * change lasts 23 or 25 hours, and months and leap years are real. Only
 * {@link Algorithm#FIXED_WINDOW} counts by the calendar.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum CalendarUnit {

	/** From local midnight to the next. */
	DAY("day", 86_400L * 25 / 24),

	/** From Monday's local midnight to the next Monday's (ISO-8601 weeks). */
	WEEK("week", 86_400L * 7 + 3_600),

	/** From the first of the month's local midnight to the next month's. */
	MONTH("month", 86_400L * 31 + 3_600),

	/** From January, April, July or October the first to the next quarter's. */
	QUARTER("quarter", 86_400L * 92 + 3_600),

	/** From January the first to the next year's. */
	YEAR("year", 86_400L * 366 + 3_600);

	private final String propertyValue;

	private final long longestSeconds;

	CalendarUnit(String propertyValue, long longestSeconds) {
		this.propertyValue = propertyValue;
		this.longestSeconds = longestSeconds;
	}

	/**
	 * Returns the name used in configuration, e.g. {@code month}.
	 * @return the property value
	 */
	public String propertyValue() {
		return this.propertyValue;
	}

	/**
	 * Returns the longest such a window lasts, daylight saving included: the length a
	 * limit with this unit is given as its window.
	 * @return the longest length, in seconds
	 */
	public long longestSeconds() {
		return this.longestSeconds;
	}

	/**
	 * Parses a configuration value, {@code day}, {@code week}, {@code month},
	 * {@code quarter} or {@code year}, in any case.
	 * @param value the value
	 * @return the unit
	 * @throws IllegalArgumentException for any other value
	 */
	public static CalendarUnit parse(String value) {
		String name = value.trim().toLowerCase(Locale.ROOT);
		for (CalendarUnit unit : values()) {
			if (unit.propertyValue.equals(name)) {
				return unit;
			}
		}
		throw new IllegalArgumentException(
				"'" + value + "' is not a calendar unit; use day, week, month, quarter or year");
	}

	/**
	 * Returns when the window that holds {@code nowMicros} starts, in µs since the epoch.
	 * @param zone the time zone
	 * @param nowMicros the time, µs since the epoch
	 * @return the start of its window
	 */
	public long startMicros(ZoneId zone, long nowMicros) {
		Instant now = Instant.ofEpochSecond(Math.floorDiv(nowMicros, 1_000_000L),
				Math.floorMod(nowMicros, 1_000_000L) * 1000L);
		LocalDate date = now.atZone(zone).toLocalDate();
		LocalDate first = switch (this) {
			case DAY -> date;
			case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
			case MONTH -> date.withDayOfMonth(1);
			case QUARTER -> date.withMonth((date.getMonthValue() - 1) / 3 * 3 + 1).withDayOfMonth(1);
			case YEAR -> date.withDayOfYear(1);
		};
		return micros(first, zone);
	}

	/**
	 * Returns when the window that starts at {@code startMicros} ends: when the next one
	 * starts.
	 * @param zone the time zone
	 * @param startMicros the start of a window, from {@link #startMicros}
	 * @return the end of that window, µs since the epoch
	 */
	public long endMicros(ZoneId zone, long startMicros) {
		LocalDate first = Instant.ofEpochSecond(Math.floorDiv(startMicros, 1_000_000L)).atZone(zone).toLocalDate();
		LocalDate next = switch (this) {
			case DAY -> first.plusDays(1);
			case WEEK -> first.plusWeeks(1);
			case MONTH -> first.plusMonths(1);
			case QUARTER -> first.plusMonths(3);
			case YEAR -> first.plusYears(1);
		};
		return micros(next, zone);
	}

	/** Local midnight of a date (or the first moment of it, when midnight is skipped). */
	private static long micros(LocalDate date, ZoneId zone) {
		return date.atStartOfDay(zone).toEpochSecond() * 1_000_000L;
	}

}
