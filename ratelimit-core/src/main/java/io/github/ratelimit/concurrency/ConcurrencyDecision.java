package io.github.ratelimit.concurrency;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

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
	 * Returns {@link #retryAfterMicros()} as a duration.
	 * @return the estimate, zero when acquired
	 */
	public Duration retryAfter() {
		return Duration.of(this.retryAfterMicros, ChronoUnit.MICROS);
	}

}
