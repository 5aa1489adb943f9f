package io.github.ratelimit.web;

/**
 * Which rate limit headers responses carry.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum HeadersMode {

	/**
	 * {@code RateLimit-Policy} and {@code RateLimit}, the structured fields of the IETF
	 * draft "RateLimit header fields for HTTP" (revision -10).
	 */
	DRAFT,

	/**
	 * {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining},
	 * {@code X-RateLimit-Reset}.
	 */
	LEGACY,

	/** Both the draft and the legacy headers. */
	BOTH,

	/** No limit headers ({@code Retry-After} is still sent with a 429). */
	NONE;

	/**
	 * Returns whether the draft headers are written.
	 * @return {@code true} for draft and both
	 */
	public boolean draft() {
		return this == DRAFT || this == BOTH;
	}

	/**
	 * Returns whether the legacy headers are written.
	 * @return {@code true} for legacy and both
	 */
	public boolean legacy() {
		return this == LEGACY || this == BOTH;
	}

}
