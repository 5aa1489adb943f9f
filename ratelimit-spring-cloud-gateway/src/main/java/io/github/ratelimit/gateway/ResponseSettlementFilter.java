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
import io.github.ratelimit.web.InFlightPermits;
import io.github.ratelimit.web.ResponseSettlement;

/**
 * Completes what the {@code RequestRateLimiter} filter started for an exchange, once the
 * response is complete: settles what routes with a {@code ratelimit.settle} argument
 * reserved, and releases the permits of routes with a {@code ratelimit.concurrency}
 * argument. The {@link BucketRateLimiter} records both in the exchange's subscriber
 * context, which this filter provides around the whole chain; a settlement reads the
 * status and the headers the backend answered with (e.g. {@code X-Tokens-Used}). Runs
 * first, so that its context reaches the {@code RequestRateLimiter} filter, and completes
 * when the chain completes, fails or is cancelled, off the event loop: settling and
 * releasing are store calls.
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
					.execute(() -> reservations.complete(status, response.getHeaders()::getFirst, this.acquirer));
			});
	}

	/**
	 * What one exchange settles from its response, and the concurrency permits it holds
	 * until then.
	 */
	static final class Reservations {

		private final List<Reserved> reserved = new ArrayList<>(1);

		private final List<InFlightPermits> held = new ArrayList<>(1);

		synchronized void add(RateLimitResult result, ResponseSettlement settlement) {
			this.reserved.add(new Reserved(result, settlement));
		}

		synchronized void hold(InFlightPermits permits) {
			this.held.add(permits);
		}

		synchronized boolean isEmpty() {
			return this.reserved.isEmpty() && this.held.isEmpty();
		}

		void complete(int status, Function<String, @Nullable String> headers, Acquirer acquirer) {
			List<Reserved> all;
			List<InFlightPermits> permits;
			synchronized (this) {
				all = List.copyOf(this.reserved);
				permits = List.copyOf(this.held);
			}
			try {
				for (Reserved one : all) {
					one.settlement().settle(one.result(), status, headers, acquirer);
				}
			}
			finally {
				permits.forEach(InFlightPermits::release);
			}
		}

	}

	private record Reserved(RateLimitResult result, ResponseSettlement settlement) {
	}

}
