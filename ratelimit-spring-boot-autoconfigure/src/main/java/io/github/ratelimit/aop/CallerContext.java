package io.github.ratelimit.aop;

import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;

/**
 * Who is calling: the current servlet request and principal, for the {@code #request} and
 * {@code #principal} variables. Spring Web, the Servlet API and Spring Security are
 * optional, so each is reached through a holder class that is loaded only when present.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class CallerContext {

	private static final ClassLoader CLASS_LOADER = CallerContext.class.getClassLoader();

	private static final boolean SERVLET_PRESENT = ClassUtils
		.isPresent("org.springframework.web.context.request.RequestContextHolder", CLASS_LOADER)
			&& ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest", CLASS_LOADER);

	private static final boolean SECURITY_PRESENT = ClassUtils
		.isPresent("org.springframework.security.core.context.SecurityContextHolder", CLASS_LOADER);

	private CallerContext() {
	}

	/**
	 * Returns the {@code HttpServletRequest} bound to this thread.
	 * @return the request, or {@code null} outside a servlet request
	 */
	static @Nullable Object currentRequest() {
		return SERVLET_PRESENT ? ServletRequests.current() : null;
	}

	/**
	 * Returns the Spring Security {@code Authentication} of this thread, else the
	 * principal of the current request.
	 * @return the principal, or {@code null} when there is none
	 */
	static @Nullable Object currentPrincipal() {
		if (SECURITY_PRESENT) {
			Object authentication = SecurityPrincipals.current();
			if (authentication != null) {
				return authentication;
			}
		}
		return SERVLET_PRESENT ? ServletRequests.currentPrincipal() : null;
	}

}
