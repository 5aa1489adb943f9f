package io.github.ratelimit.aop;

import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.clientip.reactive.ReactiveClientIp;

/**
 * Finds the WebFlux exchange a subscription serves, in the subscriber's context (where
 * the rate limit web filter, or Spring's {@link ServerWebExchangeContextFilter}, puts
 * it), and the client's address of its request. Loaded only when Spring's reactive web
 * classes are present (see {@link ReactorRateLimiting} and {@link CallerContext}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ReactiveExchanges {

	private ReactiveExchanges() {
	}

	/**
	 * Sets {@code #exchange} and {@code #request} of a call from the subscriber's
	 * context, when it holds an exchange.
	 * @param subscriber the subscriber's context
	 * @param context the call's evaluation context
	 */
	static void bind(ContextView subscriber, RateLimitedEvaluationContext context) {
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(subscriber).orElse(null);
		if (exchange != null) {
			context.setExchange(exchange, exchange.getRequest());
		}
	}

	static boolean isRequest(Object request) {
		return request instanceof ServerHttpRequest;
	}

	static @Nullable String clientIp(ClientIpResolver clientIps, Object request) {
		return ReactiveClientIp.resolve(clientIps, (ServerHttpRequest) request);
	}

}
