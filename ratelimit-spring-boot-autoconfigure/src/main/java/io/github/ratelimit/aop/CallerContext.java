package io.github.ratelimit.aop;

import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;

import io.github.ratelimit.clientip.ClientIpResolver;

/**
 * Who is calling: the current servlet request and principal, for the {@code #request} and
 * {@code #principal} variables, and the client's address of a servlet or reactive
 * request, for {@code #clientIp}. Spring Web, the Servlet API, WebFlux and Spring
 * Security are optional, so each is reached through a holder class that is loaded only
 * when present.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class CallerContext {

	private static final ClassLoader CLASS_LOADER = CallerContext.class.getClassLoader();

	private static final boolean SERVLET_PRESENT = ClassUtils
		.isPresent("org.springframework.web.context.request.RequestContextHolder", CLASS_LOADER)
			&& ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest", CLASS_LOADER);

	private static final boolean REACTIVE_PRESENT = ClassUtils
		.isPresent("org.springframework.web.filter.reactive.ServerWebExchangeContextFilter", CLASS_LOADER)
			&& ClassUtils.isPresent("reactor.core.publisher.Mono", CLASS_LOADER);

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
	 * Returns the client's address of the caller's request.
	 * @param clientIps works out the address
	 * @param request the caller's {@code HttpServletRequest} or {@code ServerHttpRequest}
	 * @return the address, or {@code null} outside a web request
	 */
	static @Nullable String clientIp(ClientIpResolver clientIps, @Nullable Object request) {
		if (request == null) {
			return null;
		}
		if (SERVLET_PRESENT && ServletRequests.isRequest(request)) {
			return ServletRequests.clientIp(clientIps, request);
		}
		if (REACTIVE_PRESENT && ReactiveExchanges.isRequest(request)) {
			return ReactiveExchanges.clientIp(clientIps, request);
		}
		return null;
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
