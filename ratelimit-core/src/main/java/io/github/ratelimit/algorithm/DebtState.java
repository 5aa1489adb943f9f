package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * A key in debt: a settlement charged it more permits than its limit had left, and it
 * pays the rest off at the limit's rate, one permit every {@code window / limit}, once
 * the limit is full again. Until {@code paidAt} every request is rejected with a
 * retry-after at that time and no permits are taken; a refund shortens the debt at the
 * same rate, and a further settlement lengthens it. Once paid, the algorithm's state
 * decides alone again, full. The twin of the Redis script's {@code debt.lua}.
 * <p>
 * The debt is a time, not a count, so that it is paid while nobody asks, in every
 * algorithm alike: what a window or a log counts is forgotten when it leaves the window,
 * so a count owed beyond the limit would be forgotten with it.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class DebtState extends LimitState {

	/**
	 * The longest a key stays in debt: two of the longest windows, the longest any state
	 * takes to be full again, so that a debt is always paid after the limit is full
	 * again; more is capped, and every time stays below {@code 2^53} µs for the Redis
	 * script.
	 */
	static final long MAX_DEBT_MICROS = 2 * LimitSpec.MAX_WINDOW.toNanos() / 1000L;

	private final LimitState inner;

	private final long paidAt;

	private DebtState(LimitState inner, long paidAt) {
		this.inner = inner;
		this.paidAt = paidAt;
	}

	/**
	 * Puts a key into debt for {@code owed} permits that its limit, once {@code state}
	 * took all it had, could not take: paid once the state is full again and the permits
	 * have come back at the limit's rate.
	 * @param spec the limit
	 * @param now the time of the settlement, µs
	 * @param state the algorithm's state after taking what it had
	 * @param owed the permits owed, at least 1
	 * @return the state in debt
	 */
	static LimitState start(LimitSpec spec, long now, LimitState state, long owed) {
		return new DebtState(state, paidAt(now, state.resetAfterMicros(spec, now), micros(spec, now, owed, true)));
	}

	/**
	 * The time {@code permits} take to come back at the limit's rate, rounded up (what a
	 * key owes) or down (what a refund pays); at most {@link #MAX_DEBT_MICROS}. The cap
	 * is found in doubles, as the Redis script finds it, so that both cap alike.
	 */
	private static long micros(LimitSpec spec, long now, long asked, boolean up) {
		// The window the limit's permits come back in: a sliding window counter's
		// segments may cover a few µs less than its window, and a calendar window lasts
		// what the calendar says.
		long window;
		if (spec.calendar() != null) {
			long[] calendar = spec.calendarWindow(now);
			window = calendar[1] - calendar[0];
		}
		else {
			window = (spec.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER) ? spec.segments() * spec.segmentMicros()
					: spec.windowMicros();
		}
		long limit = spec.limit();
		long permits = Math.min(asked, LimitSpec.MAX_LIMIT);
		if ((double) permits * window / limit >= MAX_DEBT_MICROS) {
			return MAX_DEBT_MICROS;
		}
		long quotient = MulDiv.quotient(permits, window, limit);
		return (up && MulDiv.remainder(permits, window, limit, quotient) > 0) ? quotient + 1 : quotient;
	}

	/** {@code now + wait + debt}, at most {@link #MAX_DEBT_MICROS} from now. */
	private static long paidAt(long now, long wait, long debt) {
		return now + Math.min(MAX_DEBT_MICROS, wait + debt);
	}

	private boolean inDebt(long now) {
		return now < this.paidAt;
	}

	@Override
	Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		if (!inDebt(now)) {
			return this.inner.decide(spec, now, cost, maxDelayMicros);
		}
		// The algorithm's answer to this request, taking nothing (see PenaltyState).
		Transition probe = this.inner.decide(spec, now, cost, maxDelayMicros);
		return Transition.rejected(PenaltyState.rejection(spec, now, probe, this.paidAt - now),
				new DebtState(probe.kept(), this.paidAt));
	}

	@Override
	public LimitState owe(LimitSpec spec, long now, long permits) {
		if (!inDebt(now)) {
			return this.inner.owe(spec, now, permits);
		}
		return new DebtState(this.inner, paidAt(now, this.paidAt - now, micros(spec, now, permits, true)));
	}

	@Override
	public long owed(LimitSpec spec, long now, long permits) {
		return inDebt(now) ? permits : this.inner.owed(spec, now, permits);
	}

	/**
	 * While in debt, a refund pays the debt off by the time its permits take to come
	 * back, rounded down; what is left of it once the debt is paid is not given to the
	 * algorithm's state, which the debt kept from being used.
	 */
	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		if (!inDebt(now)) {
			return this.inner.refund(spec, now, cost);
		}
		long credit = micros(spec, now, cost, false);
		long owed = this.paidAt - now;
		return (credit >= owed) ? this.inner : new DebtState(this.inner, this.paidAt - credit);
	}

	@Override
	public LimitState charge(LimitSpec spec, long now, long cost) {
		LimitState charged = this.inner.charge(spec, now, cost);
		return inDebt(now) ? new DebtState(charged, this.paidAt) : charged;
	}

	@Override
	long available(LimitSpec spec, long now) {
		return inDebt(now) ? 0 : this.inner.available(spec, now);
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long inner = this.inner.resetAfterMicros(spec, now);
		return inDebt(now) ? Math.max(inner, this.paidAt - now) : inner;
	}

	@Override
	public long expiresAtMicros() {
		return Math.max(this.inner.expiresAtMicros(), this.paidAt);
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return this.inner.fits(spec);
	}

	@Override
	public String toString() {
		return "in debt until " + this.paidAt + " over " + this.inner;
	}

}
