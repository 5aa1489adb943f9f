package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.web.Causes;

/**
 * Turns a {@link RateLimitExceededException} thrown while handling a request (by a
 * {@code @RateLimited} controller, or a {@code @RateLimited} bean it calls) into the same
 * 429 response the filter writes, limit headers included.
 * <p>
 * Runs at the highest precedence by default, before {@code @ExceptionHandler} methods:
 * otherwise a catch-all {@code @ExceptionHandler(Exception.class)}, common in
 * applications, would turn every rejection into a 500. Applications that want their own
 * handling can change the order with {@link #setOrder(int)} or replace this bean.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

	private static final Log logger = LogFactory.getLog(RateLimitExceptionResolver.class);

	private final RateLimitResponses responses;

	private int order = Ordered.HIGHEST_PRECEDENCE;

	/**
	 * Creates the resolver.
	 * @param responses writes the 429
	 */
	public RateLimitExceptionResolver(RateLimitResponses responses) {
		this.responses = Objects.requireNonNull(responses, "'responses' must not be null");
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		if (response.isCommitted()) {
			return null;
		}
		StoreUnavailableException unavailable = Causes.find(ex, StoreUnavailableException.class);
		if (unavailable != null) {
			try {
				this.responses.writeUnavailable(request, response);
			}
			catch (IOException writeFailure) {
				logger.debug("Could not write the 503 response", writeFailure);
			}
			return new ModelAndView();
		}
		RateLimitExceededException rejection = Causes.find(ex, RateLimitExceededException.class);
		if (rejection == null) {
			return null;
		}
		try {
			this.responses.writeRejection(request, response, rejection.getPolicy(), rejection.getDecision());
		}
		catch (IOException writeFailure) {
			// The client went away; there is nobody left to tell.
			logger.debug("Could not write the 429 response for bucket '" + rejection.getBucket() + "'", writeFailure);
		}
		return new ModelAndView();
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	/**
	 * Sets the order among the application's exception resolvers.
	 * @param order the order; {@link Ordered#HIGHEST_PRECEDENCE} by default
	 */
	public void setOrder(int order) {
		this.order = order;
	}

}
