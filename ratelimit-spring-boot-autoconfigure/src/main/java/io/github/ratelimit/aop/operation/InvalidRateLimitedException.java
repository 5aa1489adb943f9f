package io.github.ratelimit.aop.operation;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.annotation.RateLimited;

/**
 * A {@link RateLimited @RateLimited} that cannot work: a bad duration, cost, algorithm,
 * {@code onLimit} without {@code maxWait}, {@code refundWhen} on a leaky bucket, or a
 * fallback method that does not fit. Names the class, method and attribute and says how
 * to fix it.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InvalidRateLimitedException extends InvalidRateLimitConfigurationException {

	private static final long serialVersionUID = 1L;

	private final String where;

	private final String action;

	InvalidRateLimitedException(String where, String reason, String action, Throwable cause) {
		super(where + ": " + reason, cause);
		this.where = where;
		this.action = action;
	}

	InvalidRateLimitedException(String where, String reason, String action) {
		super(where + ": " + reason);
		this.where = where;
		this.action = action;
	}

	/**
	 * Returns the attribute and method at fault.
	 * @return e.g. {@code @RateLimited(window) on LoginService.login(String, String)}
	 */
	@Override
	public String getWhere() {
		return this.where;
	}

	@Override
	public String getAction() {
		return this.action;
	}

}
