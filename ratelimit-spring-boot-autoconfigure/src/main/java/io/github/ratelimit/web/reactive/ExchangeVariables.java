package io.github.ratelimit.web.reactive;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.web.RequestVariables;

/**
 * What filter rules see of a reactive request: the {@link ServerHttpRequest} as
 * {@code #request}, the {@link ServerWebExchange} as {@code #exchange}, and the client's
 * address as {@code #clientIp} (the host address of
 * {@link ServerHttpRequest#getRemoteAddress()}, without the port, as a servlet's
 * {@code getRemoteAddr()} gives it).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ExchangeVariables implements RequestVariables {

	/** The variable that holds the exchange. */
	public static final String EXCHANGE = "exchange";

	@Override
	public Class<?> requestType() {
		return ServerHttpRequest.class;
	}

	@Override
	public Object request(Object exchange) {
		return ((ServerWebExchange) exchange).getRequest();
	}

	@Override
	public @Nullable String clientIp(Object exchange) {
		return clientIp(((ServerWebExchange) exchange).getRequest());
	}

	@Override
	public void bind(Object exchange, EvaluationContext context) {
		RequestVariables.super.bind(exchange, context);
		context.setVariable(EXCHANGE, exchange);
	}

	@Override
	public String hint(String property) {
		if (property.equals("remoteAddr")) {
			return "on WebFlux the client address is #clientIp (e.g. 10.0.0.7, the same on servlets), "
					+ "or #request.remoteAddress.hostString";
		}
		if (property.equals("requestURI") || property.equals("servletPath")) {
			return "on WebFlux the path is #request.path.value()";
		}
		return "";
	}

	/**
	 * Returns the client's address as text.
	 * @param request the request
	 * @return the address without the port, or {@code null} when the server does not know
	 * it (e.g. a Unix domain socket)
	 */
	static @Nullable String clientIp(ServerHttpRequest request) {
		InetSocketAddress remote = request.getRemoteAddress();
		if (remote == null) {
			return null;
		}
		InetAddress address = remote.getAddress();
		return (address != null) ? address.getHostAddress() : remote.getHostString();
	}

}
