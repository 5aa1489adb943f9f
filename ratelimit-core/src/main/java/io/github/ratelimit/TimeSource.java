package io.github.ratelimit;

import java.time.Instant;

/**
 * Where a store reads the current time: microseconds since the epoch. Injected so tests
 * can drive time by hand.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@FunctionalInterface
public interface TimeSource {

	/**
	 * Returns the current time in microseconds since the epoch.
	 * @return the time
	 */
	long nowMicros();

	/**
	 * Returns the system wall clock. Its microsecond resolution matches Redis
	 * {@code TIME}, so decisions of the in-memory and the Redis store line up.
	 * @return the system time source
	 */
	static TimeSource system() {
		return SystemTimeSource.INSTANCE;
	}

	/**
	 * The system clock, read through {@link Instant#now()}.
	 */
	enum SystemTimeSource implements TimeSource {

		/** The only instance. */
		INSTANCE;

		@Override
		public long nowMicros() {
			Instant now = Instant.now();
			return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000L;
		}

	}

}
