package io.github.ratelimit.aop;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

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

	private static @Nullable HttpServletRequest request() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes instanceof ServletRequestAttributes servlet) ? servlet.getRequest() : null;
	}

}
