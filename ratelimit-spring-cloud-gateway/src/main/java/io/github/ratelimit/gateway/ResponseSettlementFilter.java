package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.web.ResponseSettlement;

/**
 * Settles what routes with a {@code ratelimit.settle} argument reserved, once the
 * response is complete: the {@link BucketRateLimiter} records each reservation in the
 * exchange's subscriber context, which this filter provides around the whole chain, and
 * the settlement reads the status and the headers the backend answered with (e.g.
 * {@code X-Tokens-Used}). Runs first, so that its context reaches the
 * {@code RequestRateLimiter} filter, and settles when the chain completes, fails or is
 * cancelled, off the event loop: a settlement is a store call.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class ResponseSettlementFilter implements GlobalFilter, Ordered {

	private final Acquirer acquirer;

	/**
	 * Creates the filter.
	 * @param acquirer settles through the store
	 */
	public ResponseSettlementFilter(Acquirer acquirer) {
		this.acquirer = acquirer;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		Reservations reservations = new Reservations();
		return chain.filter(exchange)
			.contextWrite((context) -> context.put(Reservations.class, reservations))
			.doFinally((signal) -> {
				if (reservations.isEmpty()) {
					return;
				}
				ServerHttpResponse response = exchange.getResponse();
				int status = ResponseSettlement.status(response.getStatusCode(), signal == SignalType.ON_ERROR,
						response.isCommitted());
				this.acquirer.waiter()
					.executor()
					.execute(() -> reservations.settle(status, response.getHeaders()::getFirst, this.acquirer));
			});
	}

	/**
	 * The reservations of one exchange that settle from its response.
	 */
	static final class Reservations {

		private final List<Reserved> reserved = new ArrayList<>(1);

		synchronized void add(RateLimitResult result, ResponseSettlement settlement) {
			this.reserved.add(new Reserved(result, settlement));
		}

		synchronized boolean isEmpty() {
			return this.reserved.isEmpty();
		}

		void settle(int status, Function<String, @Nullable String> headers, Acquirer acquirer) {
			List<Reserved> all;
			synchronized (this) {
				all = List.copyOf(this.reserved);
			}
			for (Reserved one : all) {
				one.settlement().settle(one.result(), status, headers, acquirer);
			}
		}

	}

	private record Reserved(RateLimitResult result, ResponseSettlement settlement) {
	}

}
