package io.github.ratelimit;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/**
 * Parses the window and wait durations used in annotations and configuration:
 * {@code 500ms}, {@code 10s}, {@code 1m}, {@code 1h}, {@code 1d}, or ISO-8601
 * ({@code PT1M}, {@code P1D}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class Durations {

	private Durations() {
	}

	/**
	 * Parses a duration.
	 * @param value the text, e.g. {@code "1m"} or {@code "PT1M"}
	 * @return the duration
	 * @throws IllegalArgumentException naming the value when it cannot be parsed
	 */
	public static Duration parse(String value) {
		if (value == null) {
			throw new IllegalArgumentException("Duration must not be null");
		}
		String text = value.trim();
		if (text.isEmpty()) {
			throw new IllegalArgumentException("Duration must not be empty");
		}
		char first = Character.toUpperCase(text.charAt(0));
		if (first == 'P' || ((first == '-' || first == '+') && text.length() > 1
				&& Character.toUpperCase(text.charAt(1)) == 'P')) {
			try {
				return Duration.parse(text);
			}
			catch (DateTimeParseException ex) {
				throw invalid(value);
			}
		}
		int unitStart = 0;
		while (unitStart < text.length() && (Character.isDigit(text.charAt(unitStart))
				|| unitStart == 0 && (text.charAt(0) == '-' || text.charAt(0) == '+'))) {
			unitStart++;
		}
		String number = text.substring(0, unitStart);
		String unit = text.substring(unitStart).trim().toLowerCase(Locale.ROOT);
		if (number.isEmpty() || number.equals("-") || number.equals("+")) {
			throw invalid(value);
		}
		long amount;
		try {
			amount = Long.parseLong(number);
		}
		catch (NumberFormatException ex) {
			throw invalid(value);
		}
		try {
			switch (unit) {
				case "us":
					return Duration.ofNanos(Math.multiplyExact(amount, 1000L));
				case "ms":
					return Duration.ofMillis(amount);
				case "s":
				case "":
					return Duration.ofSeconds(amount);
				case "m":
					return Duration.ofMinutes(amount);
				case "h":
					return Duration.ofHours(amount);
				case "d":
					return Duration.ofDays(amount);
				default:
					throw invalid(value);
			}
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException("Duration '" + value + "' is too large");
		}
	}

	/**
	 * Formats a duration in the shortest unit of {@code d, h, m, s, ms} that represents
	 * it exactly, the inverse of {@link #parse(String)}.
	 * @param duration the duration
	 * @return the text, e.g. {@code "1m"}
	 */
	public static String format(Duration duration) {
		int nanos = duration.getNano();
		if (nanos % 1_000_000 != 0) {
			if (nanos % 1000 == 0 && duration.getSeconds() < Long.MAX_VALUE / 1_000_000L
					&& duration.getSeconds() > Long.MIN_VALUE / 1_000_000L) {
				return (duration.getSeconds() * 1_000_000L + nanos / 1000) + "us";
			}
			return duration.toString();
		}
		long millis;
		try {
			millis = Math.addExact(Math.multiplyExact(duration.getSeconds(), 1000L), nanos / 1_000_000);
		}
		catch (ArithmeticException ex) {
			return duration.toString();
		}
		if (millis == 0) {
			return "0ms";
		}
		if (millis % 86_400_000L == 0) {
			return (millis / 86_400_000L) + "d";
		}
		if (millis % 3_600_000L == 0) {
			return (millis / 3_600_000L) + "h";
		}
		if (millis % 60_000L == 0) {
			return (millis / 60_000L) + "m";
		}
		if (millis % 1000L == 0) {
			return (millis / 1000L) + "s";
		}
		return millis + "ms";
	}

	/**
	 * Formats a duration for people to read in messages and logs, rounded up so that a
	 * "retry after" is never too early: below a second in whole milliseconds
	 * ({@code 499ms}), below a minute in seconds with at most one decimal ({@code 1.5s}),
	 * longer ones in whole units down to the second ({@code 2m5s}, {@code 1h30m},
	 * {@code 2d}). Not meant to be parsed back: use {@link #format(Duration)} for that.
	 * @param duration the duration
	 * @return the text, e.g. {@code "499ms"}
	 */
	public static String readable(Duration duration) {
		if (duration.isNegative()) {
			return "-" + readable(duration.negated());
		}
		long seconds = duration.getSeconds();
		int nanos = duration.getNano();
		if (seconds == 0) {
			return ((nanos + 999_999) / 1_000_000) + "ms";
		}
		if (seconds < 60) {
			long tenths = seconds * 10 + (nanos + 99_999_999) / 100_000_000;
			return (tenths % 10 == 0) ? (tenths / 10) + "s" : (tenths / 10) + "." + (tenths % 10) + "s";
		}
		long total = (nanos > 0) ? seconds + 1 : seconds;
		StringBuilder text = new StringBuilder();
		long[] sizes = { 86_400, 3_600, 60, 1 };
		String[] units = { "d", "h", "m", "s" };
		for (int i = 0; i < sizes.length; i++) {
			long amount = total / sizes[i];
			total %= sizes[i];
			if (amount > 0) {
				text.append(amount).append(units[i]);
			}
		}
		return text.toString();
	}

	/**
	 * Formats microseconds as {@link #readable(Duration)} does.
	 * @param micros the duration in microseconds
	 * @return the text, e.g. {@code "499ms"} for {@code 499016}
	 */
	public static String readableMicros(long micros) {
		return readable(Duration.of(micros, java.time.temporal.ChronoUnit.MICROS));
	}

	private static IllegalArgumentException invalid(String value) {
		return new IllegalArgumentException("Cannot parse duration '" + value
				+ "': use a number with a unit (500ms, 10s, 1m, 1h, 1d) or ISO-8601 (PT1M)");
	}

}
