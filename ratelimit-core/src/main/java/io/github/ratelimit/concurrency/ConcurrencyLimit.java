package io.github.ratelimit.concurrency;

import java.time.Duration;
import java.util.Objects;

import io.github.ratelimit.Durations;

/**
 * At most {@code permits} calls in flight per key, each holding a permit on a lease: a
 * permit whose holder neither releases nor renews it within {@code lease} (the instance
 * crashed, froze or lost its connection) comes back by itself.
 *
 * @param permits the calls a key may have in flight, 1 to {@value #MAX_PERMITS}
 * @param lease how long a permit is held without a renewal, 1 second to 1 day, whole
 * milliseconds
 * @author ratelimit-spring-boot-starter authors
 */
public record ConcurrencyLimit(int permits, Duration lease) {

	/** The most permits a key may have: one Redis sorted set member each. */
	public static final int MAX_PERMITS = 100_000;

	/**
	 * The shortest lease: a held permit is renewed every third of its lease through the
	 * store, which a shorter one could not count on (a round trip, a GC pause).
	 */
	public static final Duration MIN_LEASE = Duration.ofSeconds(1);

	/** The longest lease. */
	public static final Duration MAX_LEASE = Duration.ofDays(1);

	/** The lease unless one is set: long enough for a GC pause, short for a crash. */
	public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

	/**
	 * Creates a limit.
	 * @param permits the calls a key may have in flight
	 * @param lease how long a permit is held without a renewal
	 * @throws IllegalArgumentException naming the value at fault
	 */
	public ConcurrencyLimit {
		Objects.requireNonNull(lease, "'lease' must not be null");
		if (permits < 1 || permits > MAX_PERMITS) {
			throw new IllegalArgumentException("permits must be between 1 and " + MAX_PERMITS + " but was " + permits);
		}
		if (lease.compareTo(MIN_LEASE) < 0 || lease.compareTo(MAX_LEASE) > 0) {
			throw new IllegalArgumentException("lease must be between " + Durations.format(MIN_LEASE) + " and "
					+ Durations.format(MAX_LEASE) + " but was " + Durations.format(lease)
					+ " (it is renewed every third of it through the store)");
		}
		if (lease.toNanosPart() % 1_000_000 != 0) {
			throw new IllegalArgumentException(
					"lease must be a whole number of milliseconds but was " + Durations.format(lease));
		}
	}

	/**
	 * Returns the lease in microseconds.
	 * @return the lease
	 */
	public long leaseMicros() {
		return this.lease.toNanos() / 1000;
	}

	@Override
	public String toString() {
		return this.permits + " in flight (lease " + Durations.format(this.lease) + ")";
	}

}
