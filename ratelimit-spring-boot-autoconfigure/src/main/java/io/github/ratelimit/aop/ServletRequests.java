package io.github.ratelimit.aop;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.clientip.servlet.ServletClientIp;

/**
 * Reads the servlet request bound to the current thread. Loaded only when Spring Web and
 * the Servlet API are present (see {@link CallerContext}); returns {@code Object} so that
 * callers never need the Servlet types.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ServletRequests {

	private ServletRequests() {
	}

	static @Nullable Object current() {
		return request();
	}

	static @Nullable Object currentPrincipal() {
		HttpServletRequest request = request();
		return (request != null) ? request.getUserPrincipal() : null;
	}

	static boolean isRequest(Object request) {
		return request instanceof HttpServletRequest;
	}

	static @Nullable String clientIp(ClientIpResolver clientIps, Object request) {
		return ServletClientIp.resolve(clientIps, (HttpServletRequest) request);
	}

	private static @Nullable HttpServletRequest request() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet.getRequest() : null;
	}

}
