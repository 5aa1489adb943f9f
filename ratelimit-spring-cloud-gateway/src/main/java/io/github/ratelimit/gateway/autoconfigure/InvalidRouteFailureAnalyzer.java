package io.github.ratelimit.gateway.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.github.ratelimit.gateway.InvalidRouteException;

/**
 * Shows a route whose {@code RequestRateLimiter} arguments cannot be applied as Spring
 * Boot shows any failed startup: what is wrong, and the fix.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class InvalidRouteFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRouteException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidRouteException cause) {
		return new FailureAnalysis(cause.getDescription(), cause.getAction(), cause);
	}

}
