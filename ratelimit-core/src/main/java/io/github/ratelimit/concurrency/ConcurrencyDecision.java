package io.github.ratelimit.concurrency;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import io.github.ratelimit.Decision;

/**
 * The answer to one request for a permit of a {@link ConcurrencyLimit}.
 *
 * @param acquired whether the permit was taken
 * @param inFlight the permits the key holds after this request, this one included when
 * acquired
 * @param permits the limit's permits
 * @param expiredLeases leases this request found expired and took back (their holders
 * neither released nor renewed them): a crashed or frozen instance
 * @param retryAfterMicros 0 when acquired; otherwise an estimate: the time until the
 * earliest lease of the key expires unless renewed. Calls usually end sooner, and a
 * renewed lease later
 * @author ratelimit-spring-boot-starter authors
 */
public record ConcurrencyDecision(boolean acquired, int inFlight, int permits, int expiredLeases,
		long retryAfterMicros) {

	/**
	 * Returns the permits left for other calls of the key.
	 * @return never negative
	 */
	public int remaining() {
		return Math.max(0, this.permits - this.inFlight);
	}

	/**
	 * Returns this answer as a {@link Decision} without a window, so that the web layer
	 * writes its limit headers and its {@code Retry-After} as it does a rate limit's.
	 * @return the decision: allowed with the permits left, or rejected with at least a
	 * microsecond's retry estimate
	 */
	public Decision asDecision() {
		return this.acquired ? Decision.allowed(this.permits, remaining())
				: Decision.rejected(this.permits, Math.max(1, this.retryAfterMicros));
	}

	/**
	 * Returns {@link #retryAfterMicros()} as a duration.
	 * @return the estimate, zero when acquired
	 */
	public Duration retryAfter() {
		return Duration.of(this.retryAfterMicros, ChronoUnit.MICROS);
	}

}
