package io.github.ratelimit;

import java.util.Locale;

/**
 * The rate limiting algorithms. Every {@code RateLimitStore} implements all of them with
 * the same semantics; docs/algorithms.md gives the exact contract of each.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum Algorithm {

	/**
	 * Counter per window aligned to the epoch ({@code floor(t / W)}). Cheapest; admits up
	 * to {@code 2L} across a window edge.
	 */
	FIXED_WINDOW("fw", false),

	/**
	 * One timestamp per admitted permit; exact over any window of length {@code W}.
	 * Memory {@code O(L)} per key.
	 */
	SLIDING_LOG("sl", false),

	/**
	 * Weighted two-window estimate {@code prev * (1 - elapsed/W) + curr}. Constant
	 * memory, approximate.
	 */
	SLIDING_WINDOW("sw", false),

	/**
	 * {@code N} sub-window counters; the sum over the sub-windows inside the last
	 * {@code W}. Error bounded by {@code W/N}.
	 */
	SLIDING_WINDOW_COUNTER("swc", false),

	/**
	 * Capacity {@code B}, continuous refill of {@code L/W}; starts full.
	 */
	TOKEN_BUCKET("tb", true),

	/**
	 * Queue draining at a constant {@code L/W}; admitted requests get a {@code delay}
	 * until their slot, so output is smooth. Rejected when {@code B} requests are queued.
	 * Does not support refunds.
	 */
	LEAKY_BUCKET("lb", true),

	/**
	 * Generic cell rate algorithm: one theoretical arrival time per key. Admits exactly
	 * what {@link #TOKEN_BUCKET} admits for the same limit, window and burst.
	 */
	GCRA("gcra", true);

	private final String code;

	private final boolean usesBurst;

	Algorithm(String code, boolean usesBurst) {
		this.code = code;
		this.usesBurst = usesBurst;
	}

	/**
	 * Returns the short code used in store keys and scripts ({@code tb}, {@code gcra},
	 * ...).
	 * @return the short code
	 */
	public String code() {
		return this.code;
	}

	/**
	 * Returns whether the burst {@code B} of a {@link LimitSpec} applies to this
	 * algorithm.
	 * @return {@code true} for token bucket, leaky bucket and GCRA
	 */
	public boolean usesBurst() {
		return this.usesBurst;
	}

	/**
	 * Returns whether permits can be given back after a decision.
	 * @return {@code false} only for {@link #LEAKY_BUCKET}, whose slots are already
	 * scheduled
	 */
	public boolean supportsRefund() {
		return this != LEAKY_BUCKET;
	}

	/**
	 * Returns the kebab-case name used in configuration, e.g. {@code token-bucket}.
	 * @return the property value
	 */
	public String propertyValue() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * Parses an algorithm name in kebab case ({@code sliding-log}), upper snake case
	 * ({@code SLIDING_LOG}) or any case in between.
	 * @param value the name
	 * @return the algorithm
	 * @throws IllegalArgumentException naming the value and the accepted names
	 */
	public static Algorithm fromString(String value) {
		if (value == null) {
			throw new IllegalArgumentException("Algorithm must not be null");
		}
		String normalized = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
		for (Algorithm algorithm : values()) {
			if (algorithm.name().equals(normalized)) {
				return algorithm;
			}
		}
		StringBuilder names = new StringBuilder();
		for (Algorithm algorithm : values()) {
			names.append(names.length() > 0 ? ", " : "").append(algorithm.propertyValue());
		}
		throw new IllegalArgumentException("Unknown algorithm '" + value + "'; expected one of " + names);
	}

}
