package io.github.ratelimit.benchmarks;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The order in which a load visits its keys, shared by all its callers: a full-period
 * step through {@code [0, keys)}, so that every key is visited and the prefetcher cannot
 * guess the next one.
 * <p>
 * One key takes no step: the shared counter would be one more cache line crossing cores
 * on every call, measured as if it were the limiter's (the single-key flood ran in blocks
 * at two speeds while it was there).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ScrambledKeys {

	private final int keys;

	private final AtomicLong sequence = new AtomicLong();

	/**
	 * Visits {@code keys} keys.
	 * @param keys how many, at least 1
	 */
	ScrambledKeys(int keys) {
		if (keys < 1) {
			throw new IllegalArgumentException("keys must be at least 1, was " + keys);
		}
		this.keys = keys;
	}

	/**
	 * Returns the next key's index.
	 * @return an index in {@code [0, keys)}
	 */
	int next() {
		if (this.keys == 1) {
			return 0;
		}
		return (int) Math.floorMod(this.sequence.getAndIncrement() * 40_503L, (long) this.keys);
	}

}
