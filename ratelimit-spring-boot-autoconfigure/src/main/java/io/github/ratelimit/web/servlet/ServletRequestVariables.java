package io.github.ratelimit.web.servlet;

import jakarta.servlet.http.HttpServletRequest;

import io.github.ratelimit.web.RequestVariables;

/**
 * What filter rules see of a servlet request: the {@code HttpServletRequest} as
 * {@code #request}, and its {@code getRemoteAddr()} as {@code #clientIp}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ServletRequestVariables implements RequestVariables {

	@Override
	public Class<?> requestType() {
		return HttpServletRequest.class;
	}

	@Override
	public Object request(Object exchange) {
		return exchange;
	}

	@Override
	public String clientIp(Object exchange) {
		return ((HttpServletRequest) exchange).getRemoteAddr();
	}

}
