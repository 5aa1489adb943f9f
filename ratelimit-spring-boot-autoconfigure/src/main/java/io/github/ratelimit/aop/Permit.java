package io.github.ratelimit.aop;

import io.github.ratelimit.spring.RateLimitResult;

/**
 * The store's answer for one {@link PlannedLimit}.
 *
 * @param planned what was asked
 * @param result the answer
 * @param decidedAtMicros when it was asked, by the interceptor's clock; a leaky bucket
 * delay counts from here
 * @author ratelimit-spring-boot-starter authors
 */
record Permit(PlannedLimit planned, RateLimitResult result, long decidedAtMicros) {

	/**
	 * Returns whether the call may go on (allowed, or rejected in shadow mode).
	 * @return {@code true} when it may
	 */
	boolean proceeds() {
		return this.result.proceeds();
	}

	/**
	 * Returns whether permits were taken that can be given back: allowed (a shadow
	 * rejection takes nothing) and not only leaky bucket limits.
	 * @return {@code true} when a refund would change something
	 */
	boolean refundable() {
		return this.result.decision().allowed() && this.planned.operation().refundable();
	}

	/**
	 * Returns when the call may proceed as far as this permit is concerned.
	 * @return the time, in microseconds
	 */
	long proceedAtMicros() {
		return this.decidedAtMicros + this.result.decision().delayMicros();
	}

}
