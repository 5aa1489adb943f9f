package io.github.ratelimit;

/**
 * A rate limit that cannot work as configured: a bucket's limits, a filter rule, an
 * annotation's attribute or an expression. Names the thing at fault ({@link #getWhere()})
 * and says how to fix it ({@link #getAction()}); Spring Boot reports every one the same
 * way, as a failure analysis with that description and action.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public abstract class InvalidRateLimitConfigurationException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what is wrong, starting with the thing at fault
	 * @param cause the underlying failure, or {@code null}
	 */
	protected InvalidRateLimitConfigurationException(String message, Throwable cause) {
		super(message, cause);
	}

	/**
	 * Creates the exception.
	 * @param message what is wrong, starting with the thing at fault
	 */
	protected InvalidRateLimitConfigurationException(String message) {
		super(message);
	}

	/**
	 * Returns the thing at fault: a property, or an annotation's attribute and method.
	 * @return e.g. {@code ratelimit.filter.rules[0].key} or
	 * {@code @RateLimited(window) on LoginService.login(String, String)}
	 */
	public abstract String getWhere();

	/**
	 * Returns how to fix it.
	 * @return the action
	 */
	public abstract String getAction();

}
