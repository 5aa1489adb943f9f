package io.github.ratelimit.acquire;

/**
 * Whether a bucket's rejections are enforced.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum LimitMode {

	/** Rejections are enforced. */
	ENFORCE,

	/**
	 * Decisions are made, counted and reported, but every request proceeds: for trying a
	 * limit in production before enforcing it.
	 */
	SHADOW

}
