package io.github.ratelimit.web.reactive;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.Ordered;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitObserver;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.InFlightPermits;
import io.github.ratelimit.web.MatchMode;
import io.github.ratelimit.web.ResponseSettlement;

/**
 * Limits requests of a reactive application by the {@code ratelimit.filter.rules}, as the
 * servlet filter does: with {@link MatchMode#FIRST} the first matching rule applies, with
 * {@link MatchMode#ALL} every matching rule does, and a request passes only if all of
 * them allow it. The permits are taken through {@link Acquirer#acquireAsync}, so no
 * thread waits: the store's answer, a wait for a permit and a leaky bucket delay are all
 * stages the chain continues after.
 * <p>
 * A rejected request gets a 429 from {@link ReactiveRateLimitResponses} and never reaches
 * the rest of the chain. Buckets in shadow mode never reject. Every decision adds its
 * limit headers to the response, allowed or not. A rule whose key evaluates to
 * {@code null} lets the request through unlimited with {@link NullKeyPolicy#SKIP}, and is
 * answered with 400 with {@link NullKeyPolicy#ERROR} (see the servlet filter for why). A
 * store that cannot decide under {@code ratelimit.failure-mode=closed} gives 503.
 * <p>
 * A rule with {@code concurrency} takes a permit of its key, off the event loop, before
 * the rate limits are asked, and holds it until the response is complete, fails or is
 * cancelled (a client that goes away); a request refused by either holds nothing
 * afterwards.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitWebFilter implements WebFilter, Ordered {

	/** Where store calls that block run: never on an event loop. */
	private static final Executor BLOCKING_CALLS = (call) -> Schedulers.boundedElastic().schedule(call);

	private final FilterRules rules;

	private final Acquirer acquirer;

	private final ReactiveRateLimitResponses responses;

	private final int order;

	/**
	 * Creates the filter.
	 * @param rules the rules, built with {@link ExchangeVariables}
	 * @param acquirer takes the permits, waits and reports the decisions
	 * @param responses writes 429, 400 and 503 responses and the limit headers
	 * @param order the filter's order among the application's web filters
	 */
	public RateLimitWebFilter(FilterRules rules, Acquirer acquirer, ReactiveRateLimitResponses responses, int order) {
		this.rules = Objects.requireNonNull(rules, "'rules' must not be null");
		this.acquirer = Objects.requireNonNull(acquirer, "'acquirer' must not be null");
		this.responses = Objects.requireNonNull(responses, "'responses' must not be null");
		this.order = order;
	}

	/**
	 * Returns the rules, in the order they are tried.
	 * @return the rules
	 */
	public List<FilterRule> getRules() {
		return this.rules.rules();
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	/**
	 * Limits the request by the rules, and puts in the subscriber context of the rest of
	 * the chain what {@code @RateLimited} methods returning {@code Mono} or {@code Flux}
	 * find there: the exchange (as {@link ServerWebExchangeContextFilter} does), for
	 * {@code #request} and {@code #exchange}, and a {@link RateLimitObserver} that adds
	 * their decisions to this response's limit headers.
	 */
	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		RateLimitObserver headers = (result) -> this.responses.addHeaders(exchange, result);
		return limit(exchange, chain)
			.contextWrite((context) -> context.put(ServerWebExchangeContextFilter.EXCHANGE_CONTEXT_ATTRIBUTE, exchange)
				.put(RateLimitObserver.class, headers));
	}

	private Mono<Void> limit(ServerWebExchange exchange, WebFilterChain chain) {
		if (this.rules.rules().isEmpty()) {
			return chain.filter(exchange);
		}
		ServerHttpRequest request = exchange.getRequest();
		String method = request.getMethod().name();
		@Nullable PathContainer path = this.rules.needsPath() ? request.getPath().pathWithinApplication() : null;
		FilterRules.Plan plan;
		try {
			plan = this.rules.plan(exchange, method, path);
		}
		catch (RuntimeException ex) {
			return Mono.error(ex);
		}
		FilterRule missingKey = plan.missingKey();
		if (missingKey != null) {
			missingKey.reportNullKey(method + " " + request.getPath().value());
			return this.responses.writeMissingKey(exchange);
		}
		if (plan.isEmpty()) {
			return chain.filter(exchange);
		}
		if (plan.inFlight().isEmpty()) {
			return limitRate(exchange, chain, plan);
		}
		// Taking a concurrency permit is a blocking store call: off the event loop. The
		// permits are released once the rest completes, fails or is cancelled (a client
		// that goes away), and at once when a rate limit refuses.
		Mono<Optional<InFlightPermits>> taken = (plan.decidesBothAtOnce() ? acquireHolding(plan)
				: Mono.fromCallable(() -> Optional.of(InFlightPermits.acquire(plan.inFlight())))
					.subscribeOn(Schedulers.boundedElastic()))
			.onErrorResume(StoreUnavailableException.class, (ex) -> Mono.just(Optional.empty()));
		return Mono.usingWhen(taken, (inFlight) -> {
			if (inFlight.isEmpty()) {
				return this.responses.writeUnavailable(exchange);
			}
			ConcurrencyPermit refused = inFlight.get().rejection();
			if (refused != null) {
				return this.responses.writeRejection(exchange, plan.concurrencyPolicy(refused.bucket()),
						refused.decision().asDecision());
			}
			this.responses.addHeaders(exchange, inFlight.get());
			Acquisition acquisition = inFlight.get().acquisition();
			return (acquisition != null) ? proceed(exchange, chain, plan, acquisition)
					: limitRate(exchange, chain, plan);
		}, this::release, (inFlight, ex) -> release(inFlight), this::release);
	}

	/**
	 * Takes the permit of a rule limiting both rate and concurrency with its decision, in
	 * one store call off the event loop; subscribed through {@code handle}, as
	 * {@link #acquire(List)} is.
	 */
	private Mono<Optional<InFlightPermits>> acquireHolding(FilterRules.Plan plan) {
		return Mono
			.just(plan).<CompletionStage<Acquirer
					.Holding>>handle((
							toTake,
							sink) -> sink.next(this.acquirer.acquireHoldingAsync(toTake.requests().get(0),
									toTake.inFlight().get(0).limiter(), BLOCKING_CALLS)))
			.flatMap(Mono::fromCompletionStage)
			.map((holding) -> Optional.of(InFlightPermits.of(holding)));
	}

	private Mono<Void> limitRate(ServerWebExchange exchange, WebFilterChain chain, FilterRules.Plan plan) {
		if (plan.requests().isEmpty()) {
			return chain.filter(exchange);
		}
		// Only the acquisition's failure is the store's; what the chain throws is not.
		return acquire(plan.requests()).map(Optional::of)
			.onErrorResume(StoreUnavailableException.class, (ex) -> Mono.just(Optional.empty()))
			.flatMap((acquisition) -> acquisition.isPresent() ? proceed(exchange, chain, plan, acquisition.get())
					: this.responses.writeUnavailable(exchange));
	}

	/**
	 * Releases concurrency permits off the event loop: a release is a store call.
	 */
	private Mono<Void> release(Optional<InFlightPermits> inFlight) {
		inFlight.ifPresent((permits) -> {
			if (!permits.held().isEmpty()) {
				this.acquirer.waiter().executor().execute(permits::release);
			}
		});
		return Mono.empty();
	}

	/**
	 * Takes the permits when subscribed, through {@code handle}: Reactor makes the
	 * subscriber context's thread locals current around it, even without automatic
	 * context propagation, so the HTTP request's observation is the parent of the
	 * decision's, and the store's command is sent with the decision current.
	 */
	private Mono<Acquisition> acquire(List<PermitRequest> requests) {
		return Mono.just(requests)
			.<CompletionStage<Acquisition>>handle((toTake, sink) -> sink.next(this.acquirer.acquireAsync(toTake)))
			.flatMap(Mono::fromCompletionStage);
	}

	private Mono<Void> proceed(ServerWebExchange exchange, WebFilterChain chain, FilterRules.Plan plan,
			Acquisition acquisition) {
		for (RateLimitResult result : acquisition.results()) {
			this.responses.addHeaders(exchange, result);
		}
		if (!acquisition.granted()) {
			RateLimitResult rejection = acquisition.rejection();
			return this.responses.writeRejection(exchange, rejection.bucket().name(), rejection.decision());
		}
		if (!plan.settles()) {
			return chain.filter(exchange);
		}
		// Settled once the response is complete, fails or is cancelled, off the event
		// loop: a settlement is a store call.
		return chain.filter(exchange).doFinally((signal) -> {
			ServerHttpResponse response = exchange.getResponse();
			int status = ResponseSettlement.status(response.getStatusCode(), signal == SignalType.ON_ERROR,
					response.isCommitted());
			this.acquirer.waiter()
				.executor()
				.execute(() -> FilterRules.settle(plan, acquisition, status, response.getHeaders()::getFirst,
						this.acquirer));
		});
	}

}
