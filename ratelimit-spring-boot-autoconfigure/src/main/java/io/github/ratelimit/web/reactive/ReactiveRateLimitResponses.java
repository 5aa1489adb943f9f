package io.github.ratelimit.web.reactive;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.Decision;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.InFlightPermits;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitProblem;
import io.github.ratelimit.web.ResponseLimits;

/**
 * Writes what rate limiting adds to a reactive response: the limit headers of each
 * decision made for the request (collected in an exchange attribute, see
 * {@link RateLimitHeaders}), and the {@link RateLimitProblem} responses: 429 when a limit
 * rejects, 400 when a filter rule cannot key a request, 503 when the store cannot decide.
 * The twin of the servlet stack's {@code RateLimitResponses}: the same headers and
 * bodies, from the same classes.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ReactiveRateLimitResponses {

	private static final MediaType PROBLEM_JSON = MediaType.parseMediaType(RateLimitProblem.CONTENT_TYPE);

	private final RateLimitHeaders headers;

	/**
	 * Creates the response writer.
	 * @param headers works out the limit headers
	 */
	public ReactiveRateLimitResponses(RateLimitHeaders headers) {
		this.headers = Objects.requireNonNull(headers, "'headers' must not be null");
	}

	/**
	 * Adds a decision to the response's limit headers. Does nothing once the response is
	 * committed.
	 * @param exchange the exchange the decision was made for
	 * @param result the decision
	 */
	public void addHeaders(ServerWebExchange exchange, RateLimitResult result) {
		ServerHttpResponse response = exchange.getResponse();
		if (this.headers.mode() != HeadersMode.NONE && !response.isCommitted()) {
			this.headers.add(limits(exchange), result, response.getHeaders()::set);
		}
	}

	/**
	 * Adds the concurrency permits a request holds to the response's limit headers.
	 * @param exchange the exchange that holds them
	 * @param permits the permits
	 */
	public void addHeaders(ServerWebExchange exchange, InFlightPermits permits) {
		ServerHttpResponse response = exchange.getResponse();
		if (this.headers.mode() != HeadersMode.NONE && !response.isCommitted()) {
			for (ConcurrencyPermit permit : permits.held()) {
				this.headers.addInFlight(limits(exchange), permit, response.getHeaders()::set);
			}
		}
	}

	/**
	 * Writes a 429 for a rejecting decision, with its limit headers.
	 * @param exchange the exchange
	 * @param bucket the bucket that rejected
	 * @param decision the rejecting decision
	 * @return completes once the response is written
	 */
	public Mono<Void> writeRejection(ServerWebExchange exchange, String bucket, Decision decision) {
		if (this.headers.mode() != HeadersMode.NONE) {
			// Idempotent: the filter may already have added the decision.
			this.headers.addRejection(limits(exchange), bucket, decision, exchange.getResponse().getHeaders()::set);
		}
		return write(exchange, RateLimitProblem.quotaExceeded(bucket, decision, instance(exchange)));
	}

	/**
	 * Writes a 400 for a request that lacks what a filter rule keys it by.
	 * @param exchange the exchange
	 * @return completes once the response is written
	 */
	public Mono<Void> writeMissingKey(ServerWebExchange exchange) {
		return write(exchange, RateLimitProblem.missingKey(instance(exchange)));
	}

	/**
	 * Writes a 503 for a request that could not be decided because the store is
	 * unavailable and {@code ratelimit.failure-mode} is {@code closed}.
	 * @param exchange the exchange
	 * @return completes once the response is written
	 */
	public Mono<Void> writeUnavailable(ServerWebExchange exchange) {
		return write(exchange, RateLimitProblem.unavailable(instance(exchange)));
	}

	/**
	 * The request path, context path included, as the servlet stack's
	 * {@code getRequestURI()} gives it.
	 */
	private static String instance(ServerWebExchange exchange) {
		return exchange.getRequest().getPath().value();
	}

	private static ResponseLimits limits(ServerWebExchange exchange) {
		Object existing = exchange.getAttributes()
			.computeIfAbsent(RateLimitHeaders.ATTRIBUTE, (name) -> new ResponseLimits());
		if (existing instanceof ResponseLimits limits) {
			return limits;
		}
		ResponseLimits limits = new ResponseLimits();
		exchange.getAttributes().put(RateLimitHeaders.ATTRIBUTE, limits);
		return limits;
	}

	private static Mono<Void> write(ServerWebExchange exchange, RateLimitProblem problem) {
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatus.valueOf(problem.status()));
		HttpHeaders headers = response.getHeaders();
		if (problem.retryAfter() != null) {
			headers.set(HttpHeaders.RETRY_AFTER, problem.retryAfter());
		}
		byte[] bytes = problem.body().getBytes(StandardCharsets.UTF_8);
		headers.setContentType(PROBLEM_JSON);
		headers.setContentLength(bytes.length);
		DataBuffer buffer = response.bufferFactory().wrap(bytes);
		return response.writeWith(Mono.just(buffer));
	}

}
