package io.github.ratelimit;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One limit: {@code limit} permits per {@code window}, enforced by an {@link Algorithm}.
 * Immutable and validated when built; the values every store needs per decision (window
 * in microseconds, emission interval in whole microseconds and the rest, segment length)
 * are computed once here.
 *
 * <pre>{@code
 * LimitSpec spec = LimitSpec.of(100, "1m", Algorithm.TOKEN_BUCKET);
 * LimitSpec bursty = LimitSpec.builder().limit(10).window(Duration.ofSeconds(1)).burst(50).build();
 * }</pre>
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class LimitSpec {

	/**
	 * The zone of a {@link #calendar() calendar} window unless one is set; every zone
	 * whose rules are UTC's ({@code Z}, {@code Etc/UTC}, {@code GMT}) is this one.
	 */
	public static final ZoneId UTC = ZoneId.of("UTC");

	/** Sub-windows of {@link Algorithm#SLIDING_WINDOW_COUNTER} unless set otherwise. */
	public static final int DEFAULT_SEGMENTS = 10;

	/**
	 * The largest burst interval ({@code burst * window / limit}, with
	 * {@code window / limit} rounded down to the nanosecond) in nanoseconds. It keeps the
	 * time a bucket takes to refill under 2^54 ns (about 208 days), so every time the
	 * stores keep for a bucket, in microseconds, is an integer well below 2^53, where
	 * Redis's Lua numbers are exact.
	 */
	static final long MAX_BURST_INTERVAL_NANOS = 1L << 53;

	/**
	 * The largest limit and burst: {@code 2^53 - 1}, the largest integer Redis's Lua
	 * numbers (doubles) hold exactly, so both stores count alike.
	 */
	public static final long MAX_LIMIT = (1L << 53) - 1;

	/**
	 * The largest limit of {@link Algorithm#SLIDING_LOG}, which keeps one entry per
	 * permit: a million entries are about 8 MB per key in memory and 9 MB in Redis.
	 */
	public static final long MAX_SLIDING_LOG_LIMIT = 1_000_000L;

	private static final long MIN_WINDOW_MICROS = 1000L;

	/**
	 * The longest window: 50 years. Windows are handled in nanoseconds (a long holds
	 * about 292 years of them), and the in-memory store holds a sliding window's state
	 * for two windows, within the 146 years its map can hold an entry.
	 */
	public static final Duration MAX_WINDOW = Duration.ofDays(365L * 50);

	private final long limit;

	private final Duration window;

	private final Algorithm algorithm;

	private final long burst;

	private final int segments;

	private final Duration penalty;

	private final @Nullable CalendarUnit calendar;

	private final ZoneId zone;

	/**
	 * The calendar window last asked for, {@code {start, end}} in µs: computing one takes
	 * the time zone rules, and every decision of a window asks for the same.
	 */
	private volatile long @Nullable [] calendarWindow;

	private final long penaltyMicros;

	private final long windowMicros;

	private final long emissionIntervalMicros;

	private final long emissionIntervalRemainder;

	private final long segmentMicros;

	/**
	 * Computed once: the Redis store looks specs up by hash on every decision.
	 */
	private final int hash;

	private LimitSpec(long limit, Duration window, Algorithm algorithm, long burst, int segments, Duration penalty,
			@Nullable CalendarUnit calendar, ZoneId zone) {
		this.limit = limit;
		this.window = window;
		this.algorithm = algorithm;
		this.burst = burst;
		this.segments = segments;
		this.penalty = penalty;
		this.calendar = calendar;
		this.zone = zone;
		// Read by every decision: converted once.
		this.penaltyMicros = penalty.toNanos() / 1000L;
		this.windowMicros = window.toNanos() / 1000L;
		this.emissionIntervalMicros = this.windowMicros / limit;
		this.emissionIntervalRemainder = this.windowMicros % limit;
		this.segmentMicros = this.windowMicros / segments;
		this.hash = Objects.hash(limit, window, algorithm, burst, segments, penalty, calendar, zone);
	}

	/**
	 * Creates a spec with the default burst ({@code limit}) and segments.
	 * @param limit permits per window
	 * @param window the window, e.g. {@code "1m"}; see {@link Durations#parse(String)}
	 * @param algorithm the algorithm
	 * @return the spec
	 * @throws IllegalArgumentException naming the first invalid value
	 */
	public static LimitSpec of(long limit, String window, Algorithm algorithm) {
		return builder().limit(limit).window(window).algorithm(algorithm).build();
	}

	/**
	 * Creates a spec with the default burst ({@code limit}) and segments.
	 * @param limit permits per window
	 * @param window the window
	 * @param algorithm the algorithm
	 * @return the spec
	 * @throws IllegalArgumentException naming the first invalid value
	 */
	public static LimitSpec of(long limit, Duration window, Algorithm algorithm) {
		return builder().limit(limit).window(window).algorithm(algorithm).build();
	}

	/**
	 * Starts a builder; algorithm defaults to {@link Algorithm#TOKEN_BUCKET}.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns a builder initialised with this spec's values.
	 * @return a new builder
	 */
	public Builder toBuilder() {
		return new Builder().limit(this.limit)
			.window(this.window)
			.algorithm(this.algorithm)
			.burst(this.burst)
			.segments(this.segments)
			.penalty(this.penalty)
			.calendar(this.calendar)
			.zone(this.zone);
	}

	/**
	 * Returns the permits per window ({@code L}).
	 * @return the limit, at least 1
	 */
	public long limit() {
		return this.limit;
	}

	/**
	 * Returns the window ({@code W}).
	 * @return the window, at least 1 ms
	 */
	public Duration window() {
		return this.window;
	}

	/**
	 * Returns the algorithm.
	 * @return the algorithm
	 */
	public Algorithm algorithm() {
		return this.algorithm;
	}

	/**
	 * Returns the burst ({@code B}): the bucket capacity of token bucket and GCRA and the
	 * queue size of leaky bucket. Defaults to the limit.
	 * @return the burst, at least 1
	 */
	public long burst() {
		return this.burst;
	}

	/**
	 * Returns the number of sub-windows ({@code N}) of the sliding window counter.
	 * @return the segments, at least 2
	 */
	public int segments() {
		return this.segments;
	}

	/**
	 * Returns the penalty: how long a key is blocked once this limit rejects one of its
	 * requests. While blocked, this limit rejects every request of the key, with a
	 * retry-after at the end of the block, and takes no permits; a block is not
	 * lengthened by the requests it rejects. A request that could never be allowed (a
	 * cost above the capacity) does not start one.
	 * @return the penalty, {@link Duration#ZERO} for none
	 */
	public Duration penalty() {
		return this.penalty;
	}

	/**
	 * Returns the {@link #penalty()} in microseconds.
	 * @return the penalty in microseconds, 0 for none
	 */
	public long penaltyMicros() {
		return this.penaltyMicros;
	}

	/**
	 * Returns the largest cost a single request can ever be granted: the burst for
	 * algorithms that have one, the limit otherwise.
	 * @return the capacity
	 */
	public long capacity() {
		return this.algorithm.usesBurst() ? this.burst : this.limit;
	}

	/**
	 * Returns the window in microseconds, the time unit of every store.
	 * @return the window in microseconds
	 */
	public long windowMicros() {
		return this.windowMicros;
	}

	/**
	 * Returns the whole microseconds of {@code W / L}, the time one permit takes to come
	 * back in token bucket, GCRA and leaky bucket. That time is exactly
	 * {@code emissionIntervalMicros() + emissionIntervalRemainder() / limit()}
	 * microseconds, which the algorithms keep to the last fraction.
	 * @return {@code W / L} in microseconds, rounded down; 0 when more than one permit
	 * comes back per microsecond
	 */
	public long emissionIntervalMicros() {
		return this.emissionIntervalMicros;
	}

	/**
	 * Returns {@code W mod L} (with {@code W} in microseconds): the part of the emission
	 * interval below a whole microsecond, in {@code 1/L} microseconds. See
	 * {@link #emissionIntervalMicros()}.
	 * @return the remainder, from 0 (the limit divides the window) to {@code L - 1}
	 */
	public long emissionIntervalRemainder() {
		return this.emissionIntervalRemainder;
	}

	/**
	 * Returns {@code W / N} in microseconds (rounded down): the length of one sub-window
	 * of the sliding window counter.
	 * @return the segment length in microseconds
	 */
	public long segmentMicros() {
		return this.segmentMicros;
	}

	/**
	 * Returns the calendar unit the window follows, for a window that starts at local
	 * midnight rather than a whole number of windows since the epoch.
	 * @return the unit, or {@code null} for a window of a fixed length
	 */
	public @Nullable CalendarUnit calendar() {
		return this.calendar;
	}

	/**
	 * Returns the time zone of a {@link #calendar() calendar} window.
	 * @return the zone; {@link #UTC} unless set (and for every zone with UTC's rules)
	 */
	public ZoneId zone() {
		return this.zone;
	}

	/**
	 * Returns the calendar window that holds {@code nowMicros}.
	 * @param nowMicros the time, µs since the epoch
	 * @return {@code {start, end}} in µs since the epoch
	 * @throws IllegalStateException when the spec has no calendar
	 */
	public long[] calendarWindow(long nowMicros) {
		CalendarUnit unit = this.calendar;
		if (unit == null) {
			throw new IllegalStateException("Limit " + this + " has no calendar window");
		}
		long[] window = this.calendarWindow;
		if (window != null && nowMicros >= window[0] && nowMicros < window[1]) {
			return window;
		}
		long start = unit.startMicros(this.zone, nowMicros);
		window = new long[] { start, unit.endMicros(this.zone, start) };
		this.calendarWindow = window;
		return window;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		if (this == other) {
			return true;
		}
		if (!(other instanceof LimitSpec)) {
			return false;
		}
		LimitSpec that = (LimitSpec) other;
		return this.limit == that.limit && this.burst == that.burst && this.segments == that.segments
				&& this.window.equals(that.window) && this.algorithm == that.algorithm
				&& this.penalty.equals(that.penalty) && this.calendar == that.calendar && this.zone.equals(that.zone);
	}

	@Override
	public int hashCode() {
		return this.hash;
	}

	@Override
	public String toString() {
		StringBuilder text = new StringBuilder().append(this.limit).append('/');
		if (this.calendar != null) {
			text.append(this.calendar.propertyValue());
			if (!this.zone.equals(UTC)) {
				text.append(" (").append(this.zone.getId()).append(')');
			}
		}
		else {
			text.append(Durations.format(this.window));
		}
		text.append(' ').append(this.algorithm.propertyValue());
		if (this.algorithm.usesBurst() && this.burst != this.limit) {
			text.append(" burst=").append(this.burst);
		}
		if (this.algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
			text.append(" segments=").append(this.segments);
		}
		if (!this.penalty.isZero()) {
			text.append(" penalty=").append(Durations.format(this.penalty));
		}
		return text.toString();
	}

	/**
	 * Builds a {@link LimitSpec}, validating every value when {@link #build()} is called.
	 */
	public static final class Builder {

		private @Nullable Long limit;

		private @Nullable Duration window;

		private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

		private @Nullable Long burst;

		private int segments = DEFAULT_SEGMENTS;

		private Duration penalty = Duration.ZERO;

		private @Nullable CalendarUnit calendar;

		private ZoneId zone = UTC;

		private Builder() {
		}

		/**
		 * Sets the permits per window.
		 * @param limit the limit, at least 1
		 * @return this builder
		 */
		public Builder limit(long limit) {
			this.limit = limit;
			return this;
		}

		/**
		 * Sets the window.
		 * @param window the window, at least 1 ms
		 * @return this builder
		 */
		public Builder window(Duration window) {
			this.window = window;
			return this;
		}

		/**
		 * Sets the window from text such as {@code "1m"} or {@code "PT1M"}.
		 * @param window the window
		 * @return this builder
		 * @throws IllegalArgumentException naming the value when it cannot be parsed
		 */
		public Builder window(String window) {
			this.window = Durations.parse(window);
			return this;
		}

		/**
		 * Sets the algorithm.
		 * @param algorithm the algorithm
		 * @return this builder
		 */
		public Builder algorithm(Algorithm algorithm) {
			this.algorithm = Objects.requireNonNull(algorithm, "'algorithm' must not be null");
			return this;
		}

		/**
		 * Sets the burst (bucket capacity or queue size); defaults to the limit. Ignored
		 * by algorithms without a burst.
		 * @param burst the burst, at least 1
		 * @return this builder
		 */
		public Builder burst(long burst) {
			this.burst = burst;
			return this;
		}

		/**
		 * Sets the sub-windows of the sliding window counter; defaults to 10.
		 * @param segments the number of segments, at least 2
		 * @return this builder
		 */
		public Builder segments(int segments) {
			this.segments = segments;
			return this;
		}

		/**
		 * Sets the penalty: how long a key is blocked once this limit rejects one of its
		 * requests (see {@link LimitSpec#penalty()}); defaults to none.
		 * @param penalty the penalty, zero for none, at most 50 years, in whole
		 * microseconds
		 * @return this builder
		 */
		public Builder penalty(Duration penalty) {
			this.penalty = Objects.requireNonNull(penalty, "'penalty' must not be null");
			return this;
		}

		/**
		 * Sets the penalty from text such as {@code "15m"}; see
		 * {@link #penalty(Duration)}.
		 * @param penalty the penalty
		 * @return this builder
		 * @throws IllegalArgumentException naming the value when it cannot be parsed
		 */
		public Builder penalty(String penalty) {
			this.penalty = Durations.parse(penalty);
			return this;
		}

		/**
		 * Makes the window a calendar one: a day, week, month, quarter or year from local
		 * midnight in the {@link #zone(ZoneId) zone}, with {@link Algorithm#FIXED_WINDOW}
		 * only; the window is then the unit's longest length, and need not be set.
		 * @param calendar the unit, or {@code null} for a window of a fixed length
		 * @return this builder
		 */
		public Builder calendar(@Nullable CalendarUnit calendar) {
			this.calendar = calendar;
			return this;
		}

		/**
		 * Makes the window a calendar one; see {@link #calendar(CalendarUnit)}.
		 * @param calendar {@code day}, {@code week}, {@code month}, {@code quarter} or
		 * {@code year}
		 * @return this builder
		 * @throws InvalidLimitSpecException for any other value
		 */
		public Builder calendar(String calendar) {
			try {
				return calendar(CalendarUnit.parse(calendar));
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidLimitSpecException("calendar", "must be day, week, month, quarter or year", calendar,
						"use one of day, week, month, quarter, year");
			}
		}

		/**
		 * Sets the time zone of a calendar window; UTC otherwise.
		 * @param zone the zone
		 * @return this builder
		 */
		public Builder zone(ZoneId zone) {
			Objects.requireNonNull(zone, "'zone' must not be null");
			// UTC, Z, Etc/UTC and GMT count the same days: one zone, one Redis key.
			this.zone = zone.normalized().equals(ZoneOffset.UTC) ? UTC : zone;
			return this;
		}

		/**
		 * Sets the time zone of a calendar window, as an IANA id ({@code Europe/Berlin})
		 * or an offset ({@code +02:00}).
		 * @param zone the zone id
		 * @return this builder
		 * @throws InvalidLimitSpecException for an unknown zone
		 */
		public Builder zone(String zone) {
			try {
				return zone(ZoneId.of(zone.trim()));
			}
			catch (java.time.DateTimeException ex) {
				throw new InvalidLimitSpecException("zone", "is not a time zone (" + ex.getMessage() + ")", zone,
						"use an IANA id such as Europe/Berlin or America/New_York, or UTC");
			}
		}

		/**
		 * Validates the values and builds the spec.
		 * @return the spec
		 * @throws InvalidLimitSpecException naming the first invalid value
		 */
		public LimitSpec build() {
			Long limit = this.limit;
			if (limit == null) {
				throw invalid("limit", "must be set", null);
			}
			CalendarUnit calendar = this.calendar;
			Duration window = (calendar != null) ? Duration.ofSeconds(calendar.longestSeconds()) : this.window;
			if (window == null) {
				throw invalid("window", "must be set", null);
			}
			if (calendar != null && this.algorithm != Algorithm.FIXED_WINDOW) {
				throw new InvalidLimitSpecException("calendar",
						calendar.propertyValue()
								+ " counts by the calendar, which only fixed-window does (the algorithm" + " is "
								+ this.algorithm.propertyValue() + ")",
						null, "set the algorithm to fixed-window, or use a window instead");
			}
			if (calendar == null && !this.zone.equals(UTC)) {
				throw new InvalidLimitSpecException("zone", "only applies to a calendar window", this.zone.getId(),
						"set calendar (day, week, month, quarter or year), or remove the zone");
			}
			long burst = (this.burst != null) ? this.burst : limit;
			check(limit, window, burst);
			return new LimitSpec(limit, window, this.algorithm, burst, this.segments, this.penalty, calendar,
					this.zone);
		}

		/**
		 * The rules of every limit, whichever way it was set; each names one field, so
		 * that the caller can name the property, attribute or expression it came from.
		 */
		private void check(long limit, Duration window, long burst) {
			if (limit <= 0) {
				throw invalid("limit", "must be positive", limit);
			}
			if (limit > MAX_LIMIT) {
				throw invalid("limit", "must be at most " + MAX_LIMIT + " (2^53 - 1)", limit);
			}
			if (this.algorithm == Algorithm.SLIDING_LOG && limit > MAX_SLIDING_LOG_LIMIT) {
				throw new InvalidLimitSpecException("limit",
						"must be at most " + MAX_SLIDING_LOG_LIMIT
								+ " with sliding-log (it keeps one entry per permit)",
						limit, "use sliding-window-counter for larger limits");
			}
			if (window.isNegative() || window.isZero()) {
				throw invalid("window", "must be positive", Durations.format(window));
			}
			if (window.compareTo(MAX_WINDOW) > 0) {
				throw invalid("window", "must be at most " + MAX_WINDOW.toDays() + "d", Durations.format(window));
			}
			if (window.toNanos() < MIN_WINDOW_MICROS * 1000L) {
				throw invalid("window", "must be at least 1ms", Durations.format(window));
			}
			if (window.toNanos() % 1000L != 0) {
				throw invalid("window", "must be a whole number of microseconds", window);
			}
			if (this.penalty.isNegative()) {
				throw invalid("penalty", "must not be negative", Durations.format(this.penalty));
			}
			if (this.penalty.compareTo(MAX_WINDOW) > 0) {
				throw invalid("penalty", "must be at most " + MAX_WINDOW.toDays() + "d",
						Durations.format(this.penalty));
			}
			if (this.penalty.toNanos() % 1000L != 0) {
				throw invalid("penalty", "must be a whole number of microseconds", this.penalty);
			}
			if (burst <= 0) {
				throw invalid("burst", "must be positive", burst);
			}
			if (burst > MAX_LIMIT) {
				throw invalid("burst", "must be at most " + MAX_LIMIT + " (2^53 - 1)", burst);
			}
			if (this.segments < 2) {
				throw invalid("segments", "must be at least 2", this.segments);
			}
			long windowMillis = window.toNanos() / 1000L / MIN_WINDOW_MICROS;
			if (this.algorithm == Algorithm.SLIDING_WINDOW_COUNTER
					&& window.toNanos() / 1000L / this.segments < MIN_WINDOW_MICROS) {
				throw invalid("segments", "must be at most " + windowMillis + " with window " + Durations.format(window)
						+ " (each sub-window must be at least 1ms)", this.segments);
			}
			if (this.algorithm.usesBurst()) {
				long interval = window.toNanos() / limit;
				if (interval < 1) {
					throw invalid(
							"limit", "must be at most " + window.toNanos() + " per window " + Durations.format(window)
									+ " with " + this.algorithm.propertyValue() + " (one permit per nanosecond)",
							limit);
				}
				long maxBurst = MAX_BURST_INTERVAL_NANOS / interval;
				if (maxBurst < 1) {
					throw new InvalidLimitSpecException(
							"window", "must be at most 104 days per permit with " + this.algorithm.propertyValue()
									+ " (limit " + limit + ")",
							Durations.format(window), "use a larger limit or a shorter window");
				}
				if (burst > maxBurst) {
					throw new InvalidLimitSpecException("burst",
							"must be at most " + maxBurst + " with limit " + limit + " per window "
									+ Durations.format(window) + " (a longer refill than 104 days is not kept exactly)",
							burst, "use a smaller burst or window");
				}
			}
		}

		private static InvalidLimitSpecException invalid(String field, String reason, @Nullable Object value) {
			return new InvalidLimitSpecException(field, reason, value, null);
		}

	}

}
