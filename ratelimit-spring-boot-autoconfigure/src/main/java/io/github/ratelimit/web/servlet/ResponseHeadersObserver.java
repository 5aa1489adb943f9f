package io.github.ratelimit.web.servlet;

import java.util.Objects;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.github.ratelimit.acquire.RateLimitObserver;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.web.RateLimitHeaders;

/**
 * Writes limit headers for decisions made while a servlet request is being handled on the
 * current thread, such as those of {@code @RateLimited} controller or service methods.
 * The request and response come from {@link RequestContextHolder}, which Spring MVC binds
 * for the duration of a request; decisions made elsewhere (scheduled jobs, other threads)
 * have no response to write to and are ignored.
 * <p>
 * The filter writes the headers of its own decisions itself, since it runs before
 * anything binds the request; {@link RateLimitHeaders} keeps one member per decision
 * whichever of the two reports it first.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ResponseHeadersObserver implements RateLimitObserver {

	private final RateLimitResponses responses;

	/**
	 * Creates the observer.
	 * @param responses writes the headers
	 */
	public ResponseHeadersObserver(RateLimitResponses responses) {
		this.responses = Objects.requireNonNull(responses, "'responses' must not be null");
	}

	@Override
	public void onDecision(RateLimitResult result) {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (!(attributes instanceof ServletRequestAttributes servlet)) {
			return;
		}
		HttpServletResponse response = servlet.getResponse();
		if (response != null) {
			this.responses.addHeaders(servlet.getRequest(), response, result);
		}
	}

}
