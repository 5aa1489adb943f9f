package io.github.ratelimit.aop;

import reactor.util.context.ContextView;

import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;

/**
 * Finds the WebFlux exchange a subscription serves, in the subscriber's context (where
 * the rate limit web filter, or Spring's {@link ServerWebExchangeContextFilter}, puts
 * it). Loaded only when Spring's reactive web classes are present (see
 * {@link ReactorRateLimiting}).
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

}
