package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

import io.github.ratelimit.web.RateLimitStatus;

/**
 * The status endpoint on servlets: answers {@code GET} on its path with
 * {@link RateLimitStatus} and passes every other request on. A filter rather than a
 * controller, ordered just before {@link RateLimitFilter}: a status request never reaches
 * the rate limit filter, so asking spends nothing even under a rule for every path, and
 * its keys are evaluated on the request as the rate limit filter would see it (after the
 * same forwarded-header handling, before the same security filters).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitStatusFilter extends OncePerRequestFilter {

	private final RateLimitStatus status;

	private final String path;

	/**
	 * Creates the filter.
	 * @param status answers status requests
	 * @param path the path it answers, within the application, e.g. {@code /rate-limit}
	 */
	public RateLimitStatusFilter(RateLimitStatus status, String path) {
		this.status = Objects.requireNonNull(status, "'status' must not be null");
		this.path = Objects.requireNonNull(path, "'path' must not be null");
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		if (!"GET".equals(request.getMethod())) {
			return true;
		}
		String uri = request.getRequestURI();
		String contextPath = request.getContextPath();
		return uri.length() != contextPath.length() + this.path.length() || !uri.startsWith(contextPath)
				|| !uri.startsWith(this.path, contextPath.length());
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		RateLimitStatus.Answer answer = this.status.answer(request, request.getParameter("method"),
				request.getParameter("path"), request.getRequestURI());
		response.setStatus(answer.status());
		response.setHeader(HttpHeaders.CACHE_CONTROL, RateLimitStatus.CACHE_CONTROL);
		if (answer.retryAfter() != null) {
			response.setHeader(HttpHeaders.RETRY_AFTER, answer.retryAfter());
		}
		byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
		response.setContentType(answer.contentType());
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

}
