package io.github.ratelimit.web.reactive;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.clientip.reactive.ReactiveClientIp;
import io.github.ratelimit.web.RequestVariables;

/**
 * What filter rules see of a reactive request: the {@link ServerHttpRequest} as
 * {@code #request}, the {@link ServerWebExchange} as {@code #exchange}, and the client's
 * address as {@code #clientIp}, which the {@link ClientIpResolver} works out from the
 * connection and the proxies it trusts (without the port, as on servlets).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ExchangeVariables implements RequestVariables {

	/** The variable that holds the exchange. */
	public static final String EXCHANGE = "exchange";

	private final ClientIpResolver clientIps;

	/**
	 * Creates the variables.
	 * @param clientIps works out {@code #clientIp}
	 */
	public ExchangeVariables(ClientIpResolver clientIps) {
		this.clientIps = Objects.requireNonNull(clientIps, "'clientIps' must not be null");
	}

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
		return ReactiveClientIp.resolve(this.clientIps, ((ServerWebExchange) exchange).getRequest());
	}

	@Override
	public void bind(Object exchange, EvaluationContext context) {
		RequestVariables.super.bind(exchange, context);
		context.setVariable(EXCHANGE, exchange);
	}

	@Override
	public String hint(String property) {
		if (property.equals("remoteAddr")) {
			return "on WebFlux the client address is #clientIp (e.g. 10.0.0.7, the same on servlets)";
		}
		if (property.equals("requestURI") || property.equals("servletPath")) {
			return "on WebFlux the path is #request.path.value()";
		}
		return "";
	}

}
