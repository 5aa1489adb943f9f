package io.github.ratelimit.expression;

/**
 * What happens when a key expression evaluates to {@code null}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum NullKeyPolicy {

	/**
	 * Fail the call with an error naming the method and the expression: a null key is
	 * usually a bug (a missing header, an anonymous user).
	 */
	ERROR,

	/** Let the call through without limiting it. */
	SKIP

}
