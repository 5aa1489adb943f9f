package io.github.ratelimit.bucket;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.InvalidLimitSpecException;
import io.github.ratelimit.LimitSpec;

/**
 * What one layer (an annotation, a configuration entry, the defaults) says about a limit;
 * {@code null} means "not set here". Layers are merged with
 * {@link #orElse(LimitSettings)} before a {@link LimitSpec} is built.
 *
 * @param algorithm the algorithm, or {@code null}
 * @param limit the permits per window, or {@code null}
 * @param window the window, or {@code null}
 * @param burst the burst, or {@code null}
 * @param segments the sliding window counter segments, or {@code null}
 * @param penalty how long a key is blocked once the limit rejects it, or {@code null}
 * @param calendar the calendar unit of a fixed window ({@code day}, {@code week},
 * {@code month}, {@code quarter}, {@code year}), or {@code null}
 * @param zone the time zone of a calendar window (an IANA id), or {@code null}
 * @author ratelimit-spring-boot-starter authors
 */
public record LimitSettings(@Nullable Algorithm algorithm, @Nullable Long limit, @Nullable Duration window,
		@Nullable Long burst, @Nullable Integer segments, @Nullable Duration penalty, @Nullable String calendar,
		@Nullable String zone) {

	/**
	 * The names of the settings, as properties ({@code ratelimit.buckets.<name>.limit})
	 * and live changes write them; what reads or lists them by name reads this list.
	 */
	public static final List<String> FIELDS = List.of("limit", "window", "burst", "segments", "penalty", "calendar",
			"zone", "algorithm");

	/** Settings that set nothing. */
	public static final LimitSettings NONE = new LimitSettings(null, null, null, null, null);

	/**
	 * Settings without a penalty.
	 * @param algorithm the algorithm, or {@code null}
	 * @param limit the permits per window, or {@code null}
	 * @param window the window, or {@code null}
	 * @param burst the burst, or {@code null}
	 * @param segments the sliding window counter segments, or {@code null}
	 */
	public LimitSettings(@Nullable Algorithm algorithm, @Nullable Long limit, @Nullable Duration window,
			@Nullable Long burst, @Nullable Integer segments) {
		this(algorithm, limit, window, burst, segments, null, null, null);
	}

	/**
	 * Settings without a calendar window.
	 * @param algorithm the algorithm, or {@code null}
	 * @param limit the permits per window, or {@code null}
	 * @param window the window, or {@code null}
	 * @param burst the burst, or {@code null}
	 * @param segments the sliding window counter segments, or {@code null}
	 * @param penalty how long a key is blocked once the limit rejects it, or {@code null}
	 */
	public LimitSettings(@Nullable Algorithm algorithm, @Nullable Long limit, @Nullable Duration window,
			@Nullable Long burst, @Nullable Integer segments, @Nullable Duration penalty) {
		this(algorithm, limit, window, burst, segments, penalty, null, null);
	}

	/**
	 * Returns these settings with every unset field taken from {@code fallback}.
	 * @param fallback the lower-precedence settings
	 * @return the merged settings
	 */
	public LimitSettings orElse(LimitSettings fallback) {
		return new LimitSettings((this.algorithm != null) ? this.algorithm : fallback.algorithm,
				(this.limit != null) ? this.limit : fallback.limit,
				(this.window != null) ? this.window : fallback.window,
				(this.burst != null) ? this.burst : fallback.burst,
				(this.segments != null) ? this.segments : fallback.segments,
				(this.penalty != null) ? this.penalty : fallback.penalty,
				(this.calendar != null) ? this.calendar : fallback.calendar,
				(this.zone != null) ? this.zone : fallback.zone);
	}

	/**
	 * Returns whether any field is set.
	 * @return {@code true} when something is set
	 */
	public boolean isSet() {
		return this.algorithm != null || this.limit != null || this.window != null || this.burst != null
				|| this.segments != null || this.penalty != null || this.calendar != null || this.zone != null;
	}

	/**
	 * Builds the spec; every field must be set except burst, segments, penalty, calendar
	 * and zone (with a calendar, the window is the calendar's). The checks are
	 * {@link LimitSpec}'s own, so a limit is refused in the same words however it was
	 * set.
	 * @return the spec
	 * @throws InvalidLimitException naming the field at fault
	 */
	public LimitSpec toSpec() {
		LimitSpec.Builder builder = LimitSpec.builder()
			.algorithm((this.algorithm != null) ? this.algorithm : Algorithm.TOKEN_BUCKET);
		if (this.limit != null) {
			builder.limit(this.limit);
		}
		if (this.window != null) {
			builder.window(this.window);
		}
		if (this.burst != null) {
			builder.burst(this.burst);
		}
		if (this.segments != null) {
			builder.segments(this.segments);
		}
		if (this.penalty != null) {
			builder.penalty(this.penalty);
		}
		try {
			// Blank is unset: how a command line takes back what a file set.
			if (this.calendar != null && !this.calendar.isBlank()) {
				builder.calendar(this.calendar);
			}
			if (this.zone != null && !this.zone.isBlank()) {
				builder.zone(this.zone);
			}
			return builder.build();
		}
		catch (InvalidLimitSpecException ex) {
			throw new InvalidLimitException(ex);
		}
	}

	/**
	 * A limit that cannot be built; names the field, so callers can say which property or
	 * annotation attribute is at fault.
	 */
	public static final class InvalidLimitException extends IllegalArgumentException {

		private static final long serialVersionUID = 1L;

		private final InvalidLimitSpecException invalid;

		InvalidLimitException(InvalidLimitSpecException invalid) {
			super(invalid.getMessage(), invalid);
			this.invalid = invalid;
		}

		/**
		 * Returns the field at fault: {@code limit}, {@code window}, {@code burst},
		 * {@code segments}, {@code penalty}, {@code calendar} or {@code zone}.
		 * @return the field name
		 */
		public String getField() {
			return this.invalid.getField();
		}

		/**
		 * Returns the value at fault, as text.
		 * @return the value or {@code null} when the field is not set
		 */
		public @Nullable Object getValue() {
			return this.invalid.getValue();
		}

		/**
		 * Returns why the value is wrong.
		 * @return the reason
		 */
		public String getReason() {
			return this.invalid.getReason();
		}

		/**
		 * Returns how to fix the value, when the limit says more than its reason.
		 * @return the hint, or {@code null}
		 */
		public @Nullable String getHint() {
			return this.invalid.getHint();
		}

		/**
		 * Returns the problem without the field's name, in the words every way of setting
		 * a limit reports it: see {@link InvalidLimitSpecException#getProblem()}.
		 * @return the problem
		 */
		public String getProblem() {
			return this.invalid.getProblem();
		}

	}

}
