package io.github.ratelimit.clientip.servlet;

import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.clientip.ClientIpResolver;

/**
 * The client's address of a servlet request. The connection and the headers are read from
 * the request the servlet container made, under any wrapper: Spring's
 * {@code ForwardedHeaderFilter} ({@code server.forward-headers-strategy=framework}) wraps
 * the request to report the leftmost {@code X-Forwarded-For} value, which any client can
 * write, as its remote address, and to hide the header. Tomcat's {@code RemoteIpValve}
 * ({@code server.forward-headers-strategy=native}) changes the container's request
 * itself, past only the proxies {@code server.tomcat.remoteip.internal-proxies} trusts:
 * its client is the peer here.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ServletClientIp {

	private ServletClientIp() {
	}

	/**
	 * Returns the client's address of a request.
	 * @param resolver works out the address
	 * @param request the request, possibly wrapped
	 * @return the address, or {@code null} when the container does not know it
	 */
	public static @Nullable String resolve(ClientIpResolver resolver, ServletRequest request) {
		ServletRequest container = request;
		while (container instanceof ServletRequestWrapper wrapper) {
			container = wrapper.getRequest();
		}
		HttpServletRequest http = (container instanceof HttpServletRequest httpRequest) ? httpRequest : null;
		return resolver.resolve(container.getRemoteAddr(), (name) -> values(http, name));
	}

	private static List<String> values(@Nullable HttpServletRequest request, String name) {
		Enumeration<String> values = (request != null) ? request.getHeaders(name) : null;
		return (values != null && values.hasMoreElements()) ? Collections.list(values) : List.of();
	}

}
