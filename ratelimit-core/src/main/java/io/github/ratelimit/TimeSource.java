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
	 * Returns a monotonic clock in the wall clock's time scale: the wall clock read once,
	 * then advanced by {@link System#nanoTime()}. It never goes backwards, allocates
	 * nothing and is cheaper to read than {@link #system()}; it follows the wall clock's
	 * rate (both are slewed alike) but not a step of the wall clock after it was first
	 * read. The in-memory store uses it by default.
	 * @return the monotonic time source
	 */
	static TimeSource monotonic() {
		return MonotonicTimeSource.INSTANCE;
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

	/**
	 * The wall clock at class initialization plus the {@link System#nanoTime()} elapsed
	 * since.
	 */
	enum MonotonicTimeSource implements TimeSource {

		/** The only instance. */
		INSTANCE;

		private final long originNanos = System.nanoTime();

		private final long originMicros = SystemTimeSource.INSTANCE.nowMicros();

		@Override
		public long nowMicros() {
			return this.originMicros + (System.nanoTime() - this.originNanos) / 1000L;
		}

	}

}
