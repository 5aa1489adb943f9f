package io.github.ratelimit;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link TimeSource} that only moves when a test moves it.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ManualTimeSource implements TimeSource {

	private final AtomicLong micros;

	/**
	 * Creates a clock at {@code startMicros}.
	 * @param startMicros the initial time in microseconds since the epoch
	 */
	public ManualTimeSource(long startMicros) {
		this.micros = new AtomicLong(startMicros);
	}

	@Override
	public long nowMicros() {
		return this.micros.get();
	}

	/**
	 * Moves the clock forward.
	 * @param duration how far
	 */
	public void advance(Duration duration) {
		advanceMicros(duration.toNanos() / 1000L);
	}

	/**
	 * Moves the clock forward.
	 * @param micros how far, in microseconds
	 */
	public void advanceMicros(long micros) {
		if (micros < 0) {
			throw new IllegalArgumentException("time must not go backwards: " + micros);
		}
		this.micros.addAndGet(micros);
	}

	/**
	 * Sets the clock back (or forward) to {@code startMicros}: for one clock shared by
	 * tests that each start at the same time, on keys of their own.
	 * @param startMicros the new time in microseconds since the epoch
	 */
	public void restart(long startMicros) {
		this.micros.set(startMicros);
	}

	/**
	 * Moves the clock forward to {@code micros}.
	 * @param micros the new time
	 */
	public void setMicros(long micros) {
		advanceMicros(micros - this.micros.get());
	}

}
