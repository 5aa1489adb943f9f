package io.github.ratelimit.spring;

import java.util.Locale;

/**
 * What became of a request, as counted by the {@code ratelimit.decisions} metric.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum Outcome {

	/** Every limit allowed the request. */
	ALLOWED,

	/** A limit rejected the request. */
	REJECTED,

	/** A limit would have rejected the request, but its bucket is in shadow mode. */
	SHADOW_REJECTED,

	/** The store could not decide. */
	ERROR;

	/**
	 * Returns whether the request may proceed.
	 * @return {@code true} unless rejected
	 */
	public boolean proceeds() {
		return this != REJECTED;
	}

	/**
	 * Returns the metric tag value, e.g. {@code shadow_rejected}.
	 * @return the tag value
	 */
	public String tagValue() {
		return name().toLowerCase(Locale.ROOT);
	}

}
