package io.github.ratelimit.bucket;

import io.github.ratelimit.InvalidRateLimitConfigurationException;

/**
 * A concurrency limit that cannot work as configured: no permits set, or a value out of
 * range. Reported by Spring Boot as a failure analysis naming the property.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class InvalidConcurrencyLimitException extends InvalidRateLimitConfigurationException {

	private static final long serialVersionUID = 1L;

	private final String where;

	private final String action;

	/**
	 * Creates the exception.
	 * @param where the property at fault
	 * @param problem what is wrong with it
	 * @param action how to fix it
	 */
	public InvalidConcurrencyLimitException(String where, String problem, String action) {
		super(where + ": " + problem);
		this.where = where;
		this.action = action;
	}

	@Override
	public String getWhere() {
		return this.where;
	}

	@Override
	public String getAction() {
		return this.action;
	}

}
