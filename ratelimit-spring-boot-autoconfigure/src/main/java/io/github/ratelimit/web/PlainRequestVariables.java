package io.github.ratelimit.web;

import org.jspecify.annotations.Nullable;

/**
 * The {@link RequestVariables} of a stack whose filter object is the request itself and
 * that knows nothing more of it.
 *
 * @param requestType the type of the request
 * @author ratelimit-spring-boot-starter authors
 */
record PlainRequestVariables(Class<?> requestType) implements RequestVariables {

	@Override
	public Object request(Object exchange) {
		return exchange;
	}

	@Override
	public @Nullable String clientIp(Object exchange) {
		return null;
	}

}
