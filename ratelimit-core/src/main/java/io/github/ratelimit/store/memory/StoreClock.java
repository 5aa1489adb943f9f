package io.github.ratelimit.store.memory;

import com.github.benmanes.caffeine.cache.Ticker;

import io.github.ratelimit.TimeSource;

/**
 * The in-memory store's clock, and its map's clock as a {@link Ticker} that costs no
 * clock read.
 * <p>
 * Every read of the time source is remembered; the ticker returns the latest one
 * remembered. It lags the time source, never leads it: the map then expires an entry at
 * most a little later than told, never earlier, which is the direction that keeps every
 * decision exact. A decision thus reads the clock once, where a ticker of its own would
 * read it a second time inside every map lookup.
 */
final class StoreClock implements Ticker {

	/** Remembering a time less than this much newer is not worth a shared write. */
	private static final long RESOLUTION_MICROS = 1000L;

	private final TimeSource source;

	private volatile long seenMicros;

	StoreClock(TimeSource source) {
		this.source = source;
		this.seenMicros = source.nowMicros();
	}

	/**
	 * Reads the time source.
	 * @return the time in microseconds
	 */
	long nowMicros() {
		long now = this.source.nowMicros();
		if (now - this.seenMicros >= RESOLUTION_MICROS) {
			this.seenMicros = now;
		}
		return now;
	}

	/**
	 * Returns the latest time read, in nanoseconds.
	 */
	@Override
	public long read() {
		return this.seenMicros * 1000L;
	}

}
