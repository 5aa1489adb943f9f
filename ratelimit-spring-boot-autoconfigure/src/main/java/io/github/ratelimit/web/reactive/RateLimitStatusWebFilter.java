package io.github.ratelimit.web.reactive;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.github.ratelimit.web.RateLimitStatus;

/**
 * The status endpoint on WebFlux: answers {@code GET} on its path with
 * {@link RateLimitStatus} and passes every other request on. Ordered just before
 * {@link RateLimitWebFilter}, for the reasons the servlet filter gives
 * ({@code RateLimitStatusFilter}). The store is read off the event loop, since reading a
 * key is a blocking call to the store.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitStatusWebFilter implements WebFilter, Ordered {

	private final RateLimitStatus status;

	private final String path;

	private final int order;

	/**
	 * Creates the filter.
	 * @param status answers status requests
	 * @param path the path it answers, within the application, e.g. {@code /rate-limit}
	 * @param order the filter's order, before the rate limit filter's
	 */
	public RateLimitStatusWebFilter(RateLimitStatus status, String path, int order) {
		this.status = Objects.requireNonNull(status, "'status' must not be null");
		this.path = Objects.requireNonNull(path, "'path' must not be null");
		this.order = order;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpRequest request = exchange.getRequest();
		if (request.getMethod() != HttpMethod.GET
				|| !this.path.equals(request.getPath().pathWithinApplication().value())) {
			return chain.filter(exchange);
		}
		return Mono
			.fromCallable(() -> this.status.answer(exchange, request.getQueryParams().getFirst("method"),
					request.getQueryParams().getFirst("path"), request.getPath().value()))
			.subscribeOn(Schedulers.boundedElastic())
			.flatMap((answer) -> write(exchange.getResponse(), answer));
	}

	private static Mono<Void> write(ServerHttpResponse response, RateLimitStatus.Answer answer) {
		response.setStatusCode(HttpStatus.valueOf(answer.status()));
		HttpHeaders headers = response.getHeaders();
		headers.setCacheControl(RateLimitStatus.CACHE_CONTROL);
		if (answer.retryAfter() != null) {
			headers.set(HttpHeaders.RETRY_AFTER, answer.retryAfter());
		}
		headers.setContentType(MediaType.parseMediaType(answer.contentType()));
		byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
		headers.setContentLength(body.length);
		DataBuffer buffer = response.bufferFactory().wrap(body);
		return response.writeWith(Mono.just(buffer));
	}

}
