package io.github.ratelimit.acquire;

import java.util.Locale;

/**
 * What became of a request to one bucket: the {@code outcome} tag of the
 * {@code ratelimit.decisions} metric and the counts of the {@code ratelimits} endpoint.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum Outcome {

	/**
	 * Every limit allowed the request when first asked (a leaky bucket delay included).
	 */
	ALLOWED,

	/**
	 * A limit rejected the request at first; it waited for its permit
	 * ({@code onLimit = WAIT}, {@code RateLimiter.acquire}) and then got it.
	 */
	WAITED,

	/** A limit rejected the request, finally. */
	REJECTED,

	/** A limit would have rejected the request, but its bucket is in shadow mode. */
	SHADOW_REJECTED,

	/** The store could not decide. */
	ERROR;

	/**
	 * Returns whether the request may proceed.
	 * @return {@code true} when allowed, waited or shadow-rejected
	 */
	public boolean proceeds() {
		return this == ALLOWED || this == WAITED || this == SHADOW_REJECTED;
	}

	/**
	 * Returns the metric tag value, e.g. {@code shadow_rejected}.
	 * @return the tag value
	 */
	public String tagValue() {
		return name().toLowerCase(Locale.ROOT);
	}

}
