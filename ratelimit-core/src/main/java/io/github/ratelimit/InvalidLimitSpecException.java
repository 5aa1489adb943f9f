package io.github.ratelimit;

import org.jspecify.annotations.Nullable;

/**
 * A {@link LimitSpec} value that cannot work: the one rule every way of setting a limit
 * (properties, annotations, filter rules, live changes, per-call expressions) is checked
 * by. The parts are kept apart so that each of those can name the value its own way (a
 * property, an annotation attribute, an expression) and still say the same
 * {@link #getProblem() problem} in the same words.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InvalidLimitSpecException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String field;

	private final String reason;

	private final @Nullable String value;

	private final @Nullable String hint;

	InvalidLimitSpecException(String field, String reason, @Nullable Object value, @Nullable String hint) {
		super(field + " " + problem(reason, value, hint));
		this.field = field;
		this.reason = reason;
		this.value = (value != null) ? String.valueOf(value) : null;
		this.hint = hint;
	}

	private static String problem(String reason, @Nullable Object value, @Nullable String hint) {
		return reason + ((value != null) ? " but was " + value : "") + ((hint != null) ? "; " + hint : "");
	}

	/**
	 * Returns the field at fault.
	 * @return {@code limit}, {@code window}, {@code burst} or {@code segments}
	 */
	public String getField() {
		return this.field;
	}

	/**
	 * Returns what the value must be.
	 * @return e.g. {@code must be positive} or
	 * {@code must be at most 1000000 with sliding-log (it keeps one entry per permit)}
	 */
	public String getReason() {
		return this.reason;
	}

	/**
	 * Returns the value at fault, as text (a window as {@code 1m}, say).
	 * @return the value, or {@code null} when the field was not set
	 */
	public @Nullable String getValue() {
		return this.value;
	}

	/**
	 * Returns another way to get what was asked for, when there is one.
	 * @return e.g. {@code use sliding-window-counter for larger limits}, or {@code null}
	 */
	public @Nullable String getHint() {
		return this.hint;
	}

	/**
	 * Returns the problem without the field's name: the reason, the value and the hint.
	 * Every place that reports an invalid limit puts this after its own name of the
	 * value, e.g. {@code ratelimit.buckets.api.limit: must be positive but was -1}.
	 * @return the problem
	 */
	public String getProblem() {
		return problem(this.reason, this.value, this.hint);
	}

}
