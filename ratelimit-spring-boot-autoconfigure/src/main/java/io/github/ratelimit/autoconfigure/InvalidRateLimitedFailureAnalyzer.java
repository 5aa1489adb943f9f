package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.aop.operation.InvalidRateLimitedException;

/**
 * Reports a {@code @RateLimited} attribute that cannot work (duration, cost, algorithm,
 * {@code onLimit}, {@code refundWhen}, {@code fallbackMethod}), naming the method.
 */
class InvalidRateLimitedFailureAnalyzer extends ConfigurationFailureAnalyzer<InvalidRateLimitedException> {

	@Override
	String action(InvalidRateLimitedException cause) {
		return cause.getAction();
	}

}
