package io.github.ratelimit.web;

import io.github.ratelimit.InvalidRateLimitConfigurationException;

/**
 * A {@code ratelimit.filter.rules[i]} entry that cannot work: a bad path pattern, an
 * unknown HTTP method, a cost below 1, or a key or cost expression that reads something
 * the request does not offer. Names the property at fault and says how to fix it.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InvalidFilterRuleException extends InvalidRateLimitConfigurationException {

	private static final long serialVersionUID = 1L;

	private final String property;

	private final String action;

	/**
	 * Creates the exception.
	 * @param property the property at fault, e.g. {@code ratelimit.filter.rules[0].key}
	 * @param message what is wrong, starting with the property
	 * @param action how to fix it
	 * @param cause the underlying failure, or {@code null}
	 */
	public InvalidFilterRuleException(String property, String message, String action, Throwable cause) {
		super(message, cause);
		this.property = property;
		this.action = action;
	}

	/**
	 * Creates the exception.
	 * @param property the property at fault, e.g. {@code ratelimit.filter.rules[0].key}
	 * @param message what is wrong, starting with the property
	 * @param action how to fix it
	 */
	public InvalidFilterRuleException(String property, String message, String action) {
		super(message);
		this.property = property;
		this.action = action;
	}

	/**
	 * Returns the property at fault.
	 * @return e.g. {@code ratelimit.filter.rules[0].key}
	 */
	public String getProperty() {
		return this.property;
	}

	@Override
	public String getWhere() {
		return this.property;
	}

	@Override
	public String getAction() {
		return this.action;
	}

}
