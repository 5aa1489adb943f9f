package io.github.ratelimit.algorithm;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * A key blocked until {@code until} by its limit's {@link LimitSpec#penalty() penalty},
 * over the algorithm's own state. While blocked, every request is rejected with a
 * retry-after at the end of the block, no permits are taken, and the requests it rejects
 * do not lengthen it; refunds and charges still reach the algorithm's state. Once the
 * block is over, or while the spec has no penalty, the algorithm's state decides alone (a
 * penalty set again within the block enforces the rest of it, as the Redis key of the
 * block outlives a change). The twin of the Redis script's {@code penalty.lua}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class PenaltyState extends LimitState {

	private final LimitState inner;

	private final long until;

	private PenaltyState(LimitState inner, long until) {
		this.inner = inner;
		this.until = until;
	}

	/**
	 * Blocks a key whose request the algorithm has just rejected.
	 * @param spec the limit, with a penalty
	 * @param now the time of the rejected request, µs
	 * @param kept the algorithm's state after the rejection
	 * @return the rejection, with a retry-after at the end of the block, marked as
	 * {@link Decision#penaltyStarted() starting it}
	 */
	static Transition start(LimitSpec spec, long now, Transition rejected) {
		long penalty = spec.penaltyMicros();
		return Transition.rejected(rejection(spec, now, rejected, penalty).startingPenalty(),
				new PenaltyState(rejected.kept(), now + penalty));
	}

	@Override
	Transition decide(LimitSpec spec, long now, long cost, long maxDelayMicros) {
		if (!blocked(spec, now)) {
			Transition transition = this.inner.decide(spec, now, cost, maxDelayMicros);
			// A block the spec no longer enforces is kept to its end, as Redis keeps its
			// key: a penalty set again within it enforces the rest.
			return (now < this.until) ? new Transition(transition.decision(),
					new PenaltyState(transition.next(), this.until), new PenaltyState(transition.kept(), this.until))
					: transition;
		}
		// The algorithm's answer to this request, taking nothing: a retry-after that the
		// algorithm would not keep is not honest either.
		Transition probe = this.inner.decide(spec, now, cost, maxDelayMicros);
		return Transition.rejected(rejection(spec, now, probe, this.until - now),
				new PenaltyState(probe.kept(), this.until));
	}

	/**
	 * No permits while blocked, a retry once both the block and any rejection of the
	 * algorithm (or a debt) are over, and the limit full again once both the block and
	 * what the algorithm reports now are. {@link DebtState} answers alike.
	 * @param spec the limit
	 * @param now the time, µs
	 * @param algorithm the algorithm's answer to the request, taking nothing
	 * @param blocked how long the block lasts from now, µs
	 * @return the rejection
	 */
	static Decision rejection(LimitSpec spec, long now, Transition algorithm, long blocked) {
		Decision decision = algorithm.decision();
		long retry = (decision.allowed() || decision.retryAfterMicros() == Decision.NEVER) ? blocked
				: Math.max(blocked, decision.retryAfterMicros());
		// An allowed answer reports the reset once taken; nothing is taken.
		long reset = decision.allowed() ? algorithm.kept().resetAfterMicros(spec, now) : decision.resetAfterMicros();
		return Decision.rejected(spec, 0, Math.max(reset, blocked), retry);
	}

	private boolean blocked(LimitSpec spec, long now) {
		return now < this.until && spec.penaltyMicros() > 0;
	}

	@Override
	public LimitState refund(LimitSpec spec, long now, long cost) {
		LimitState refunded = this.inner.refund(spec, now, cost);
		return (now < this.until) ? new PenaltyState(refunded, this.until) : refunded;
	}

	@Override
	public LimitState charge(LimitSpec spec, long now, long cost) {
		LimitState charged = this.inner.charge(spec, now, cost);
		return (now < this.until) ? new PenaltyState(charged, this.until) : charged;
	}

	@Override
	public long owed(LimitSpec spec, long now, long permits) {
		return this.inner.owed(spec, now, permits);
	}

	@Override
	public LimitState owe(LimitSpec spec, long now, long permits) {
		LimitState owed = this.inner.owe(spec, now, permits);
		return (now < this.until) ? new PenaltyState(owed, this.until) : owed;
	}

	@Override
	long available(LimitSpec spec, long now) {
		return blocked(spec, now) ? 0 : this.inner.available(spec, now);
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long inner = this.inner.resetAfterMicros(spec, now);
		return blocked(spec, now) ? Math.max(inner, this.until - now) : inner;
	}

	@Override
	public long expiresAtMicros() {
		return Math.max(this.inner.expiresAtMicros(), this.until);
	}

	@Override
	public boolean fits(LimitSpec spec) {
		return this.inner.fits(spec);
	}

	@Override
	public String toString() {
		return "blocked until " + this.until + " over " + this.inner;
	}

}
