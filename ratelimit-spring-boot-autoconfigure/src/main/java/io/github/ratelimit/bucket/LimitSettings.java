package io.github.ratelimit.bucket;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Algorithm;
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
 * @author ratelimit-spring-boot-starter authors
 */
public record LimitSettings(@Nullable Algorithm algorithm, @Nullable Long limit, @Nullable Duration window,
		@Nullable Long burst, @Nullable Integer segments) {

	/** Settings that set nothing. */
	public static final LimitSettings NONE = new LimitSettings(null, null, null, null, null);

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
				(this.segments != null) ? this.segments : fallback.segments);
	}

	/**
	 * Returns whether any field is set.
	 * @return {@code true} when something is set
	 */
	public boolean isSet() {
		return this.algorithm != null || this.limit != null || this.window != null || this.burst != null
				|| this.segments != null;
	}

	/**
	 * Builds the spec; every field must be set except burst and segments.
	 * @return the spec
	 * @throws InvalidLimitException naming the field at fault
	 */
	public LimitSpec toSpec() {
		if (this.limit == null) {
			throw new InvalidLimitException("limit", null, "must be set");
		}
		if (this.window == null) {
			throw new InvalidLimitException("window", null, "must be set");
		}
		if (this.limit <= 0) {
			throw new InvalidLimitException("limit", this.limit, "must be positive");
		}
		if (this.window.isNegative() || this.window.isZero()) {
			throw new InvalidLimitException("window", this.window, "must be positive");
		}
		if (this.burst != null && this.burst <= 0) {
			throw new InvalidLimitException("burst", this.burst, "must be positive");
		}
		if (this.segments != null && this.segments < 2) {
			throw new InvalidLimitException("segments", this.segments, "must be at least 2");
		}
		LimitSpec.Builder builder = LimitSpec.builder()
			.limit(this.limit)
			.window(this.window)
			.algorithm((this.algorithm != null) ? this.algorithm : Algorithm.TOKEN_BUCKET);
		if (this.burst != null) {
			builder.burst(this.burst);
		}
		if (this.segments != null) {
			builder.segments(this.segments);
		}
		try {
			return builder.build();
		}
		catch (IllegalArgumentException ex) {
			String message = String.valueOf(ex.getMessage());
			String field = message.startsWith("burst") ? "burst"
					: message.startsWith("segments") || message.startsWith("window / segments") ? "segments"
							: message.startsWith("limit") ? "limit" : "window";
			throw new InvalidLimitException(field, null, message);
		}
	}

	/**
	 * A limit that cannot be built; names the field, so callers can say which property or
	 * annotation attribute is at fault.
	 */
	public static final class InvalidLimitException extends IllegalArgumentException {

		private static final long serialVersionUID = 1L;

		private final String field;

		private final @Nullable Object value;

		private final String reason;

		InvalidLimitException(String field, @Nullable Object value, String reason) {
			super(field + ((value != null) ? " " + value : "") + ": " + reason);
			this.field = field;
			this.value = value;
			this.reason = reason;
		}

		/**
		 * Returns the field at fault: {@code limit}, {@code window}, {@code burst} or
		 * {@code segments}.
		 * @return the field name
		 */
		public String getField() {
			return this.field;
		}

		/**
		 * Returns the value at fault, when known.
		 * @return the value or {@code null}
		 */
		public @Nullable Object getValue() {
			return this.value;
		}

		/**
		 * Returns why the value is wrong.
		 * @return the reason
		 */
		public String getReason() {
			return this.reason;
		}

	}

}
