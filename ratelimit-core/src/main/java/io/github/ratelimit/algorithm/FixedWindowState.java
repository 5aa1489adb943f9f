package io.github.ratelimit.algorithm;

import java.time.ZoneId;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarUnit;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#FIXED_WINDOW}: a counter for the window {@code floor(t / W)}, or, for
 * a {@link LimitSpec#calendar() calendar} window, for the window that starts at
 * {@code window} µs (local midnight of its first day). A count of an earlier window reads
 * as 0, so nothing needs tidying.
 */
final class FixedWindowState extends LimitState {

	/** The window of the spec this state is for, part of its shape. */
	private final long windowMicros;

	/** The calendar unit of the spec, part of its shape; {@code null} for none. */
	private final @Nullable CalendarUnit calendar;

	/** The zone of a calendar window, part of its shape. */
	private final @Nullable ZoneId zone;

	/** The window's index, or a calendar window's start (µs). */
	private final long window;

	/** When the window ends, µs; {@link Long#MIN_VALUE} for a fresh state. */
	private final long end;

	private final long count;

	private FixedWindowState(long windowMicros, @Nullable CalendarUnit calendar, @Nullable ZoneId zone, long window,
			long end, long count) {
		this.windowMicros = windowMicros;
		this.calendar = calendar;
		this.zone = zone;
		this.window = window;
		this.end = end;
		this.count = count;
	}

	/** The fresh state of {@code spec}. */
	static FixedWindowState of(LimitSpec spec) {
		CalendarUnit calendar = spec.calendar();
		return new FixedWindowState(spec.windowMicros(), calendar, (calendar != null) ? spec.zone() : null,
				Long.MIN_VALUE, Long.MIN_VALUE, 0);
	}

	/** This state's shape, counting {@code count} in the window of {@code index}. */
	private FixedWindowState counting(long index, long end, long count) {
		return new FixedWindowState(this.windowMicros, this.calendar, this.zone, index, end, count);
	}

	/** The window that holds {@code now}: its index, or a calendar window's start. */
	private static long index(LimitSpec spec, long now) {
		return (spec.calendar() != null) ? spec.calendarWindow(now)[0] : Math.floorDiv(now, spec.windowMicros());
	}

	/** When the window of {@code index}, which holds {@code now}, ends. */
	private static long end(LimitSpec spec, long now, long index) {
		return (spec.calendar() != null) ? spec.calendarWindow(now)[1] : (index + 1) * spec.windowMicros();
	}

	private long used(LimitSpec spec, long now) {
		return (index(spec, now) == this.window) ? this.count : 0;
	}

	@Override
	Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		// The window worked out once: every decision of a fixed window comes here.
		long index = index(spec, now);
		long end = end(spec, now, index);
		long used = (index == this.window) ? this.count : 0;
		long untilNextWindow = end - now;
		// cost <= limit - used, as used + cost may overflow; used may exceed a lowered
		// limit.
		if (cost <= spec.limit() - used) {
			Decision allowed = Decision.allowed(spec, spec.limit() - used - cost, untilNextWindow, 0);
			return new Transition(allowed, counting(index, end, used + cost), this);
		}
		long retryAfter = (cost > spec.limit()) ? Decision.NEVER : untilNextWindow;
		return Transition
			.rejected(Decision.rejected(spec, spec.limit() - used, (used > 0) ? untilNextWindow : 0, retryAfter), this);
	}

	@Override
	public LimitState charge(LimitSpec spec, long now, long cost) {
		long index = index(spec, now);
		long used = (index == this.window) ? this.count : 0;
		long after = charged(used, cost, spec.limit());
		return (after == used) ? this : counting(index, end(spec, now, index), after);
	}

	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		if (index(spec, now) != this.window) {
			return this;
		}
		return new FixedWindowState(this.windowMicros, this.calendar, this.zone, this.window, this.end,
				Math.max(0, this.count - cost));
	}

	@Override
	long available(LimitSpec spec, long now) {
		return spec.limit() - used(spec, now);
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long index = index(spec, now);
		return (index == this.window && this.count > 0) ? end(spec, now, index) - now : 0;
	}

	@Override
	public long expiresAtMicros() {
		return this.end;
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return spec.algorithm() == Algorithm.FIXED_WINDOW && spec.windowMicros() == this.windowMicros
				&& spec.calendar() == this.calendar && (this.calendar == null || spec.zone().equals(this.zone));
	}

}
