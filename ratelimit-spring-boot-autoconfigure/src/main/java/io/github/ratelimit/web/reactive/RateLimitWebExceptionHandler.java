package io.github.ratelimit.web.reactive;

import java.util.Objects;

import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.web.Causes;

/**
 * Turns a {@link RateLimitExceededException} that reaches the web handler of a reactive
 * application (from a {@code @RateLimited} controller method returning {@code Mono} or
 * {@code Flux}, or a {@code @RateLimited} bean it calls) into the same 429 response the
 * filter writes, {@code Retry-After} and limit headers included; a
 * {@link StoreUnavailableException} ({@code ratelimit.failure-mode=closed}) into a 503.
 * <p>
 * Runs at order -2, before Spring Boot's error handler (-1), which would answer 500 and
 * log the rejection at ERROR with its stack trace. A rejection is the limit working, not
 * an error: nothing is logged. Other exceptions pass on untouched, and so does a
 * rejection whose response is already committed (a {@code Flux} that failed mid-stream).
 * <p>
 * An {@code @ExceptionHandler} of the application that catches the exception sees it
 * first (WebFlux calls those inside the handler); one that catches {@code Exception}
 * wins.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitWebExceptionHandler implements WebExceptionHandler, Ordered {

	/** The order: before Spring Boot's {@code ErrorWebExceptionHandler} at -1. */
	public static final int ORDER = -2;

	private final ReactiveRateLimitResponses responses;

	/**
	 * Creates the handler.
	 * @param responses writes the 429 and the 503
	 */
	public RateLimitWebExceptionHandler(ReactiveRateLimitResponses responses) {
		this.responses = Objects.requireNonNull(responses, "'responses' must not be null");
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		if (exchange.getResponse().isCommitted()) {
			return Mono.error(ex);
		}
		StoreUnavailableException unavailable = Causes.find(ex, StoreUnavailableException.class);
		if (unavailable != null) {
			return this.responses.writeUnavailable(exchange);
		}
		RateLimitExceededException rejection = Causes.find(ex, RateLimitExceededException.class);
		if (rejection == null) {
			return Mono.error(ex);
		}
		return this.responses.writeRejection(exchange, rejection.getPolicy(), rejection.getDecision());
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
