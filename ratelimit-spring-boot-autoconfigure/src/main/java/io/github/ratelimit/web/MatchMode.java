package io.github.ratelimit.web;

/**
 * How many filter rules apply to one request.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum MatchMode {

	/** The first matching rule, in the order configured. */
	FIRST,

	/** Every matching rule; the request passes only if all allow it. */
	ALL

}
