package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.InvalidRateLimitConfigurationException;

/**
 * Reports every rate limit that cannot work as configured (a bucket's limits, a filter
 * rule, a {@code @RateLimited} attribute, an expression) as Spring Boot reports a
 * configuration mistake: what is wrong, naming the thing at fault, and how to fix it,
 * whatever bean it was found in.
 */
class InvalidRateLimitConfigurationFailureAnalyzer
		extends ConfigurationFailureAnalyzer<InvalidRateLimitConfigurationException> {

	@Override
	String action(InvalidRateLimitConfigurationException cause) {
		return cause.getAction();
	}

}
