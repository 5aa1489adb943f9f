package io.github.ratelimit.web.servlet;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;

import io.github.ratelimit.Decision;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.InFlightPermits;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitProblem;
import io.github.ratelimit.web.ResponseLimits;

/**
 * Writes what rate limiting adds to a servlet response: the limit headers of each
 * decision made for the request (collected in a request attribute, see
 * {@link RateLimitHeaders}), and the {@link RateLimitProblem} responses: 429 when a limit
 * rejects, 400 when a filter rule cannot key a request, 503 when the store cannot decide.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitResponses {

	private final RateLimitHeaders headers;

	/**
	 * Creates the response writer.
	 * @param headers works out the limit headers
	 */
	public RateLimitResponses(RateLimitHeaders headers) {
		this.headers = Objects.requireNonNull(headers, "'headers' must not be null");
	}

	/**
	 * Returns the header logic.
	 * @return the header logic
	 */
	public RateLimitHeaders headers() {
		return this.headers;
	}

	/**
	 * Adds a decision to the response's limit headers. Does nothing once the response is
	 * committed.
	 * @param request the request the decision was made for
	 * @param response its response
	 * @param result the decision
	 */
	public void addHeaders(HttpServletRequest request, HttpServletResponse response, RateLimitResult result) {
		if (this.headers.mode() != HeadersMode.NONE && !response.isCommitted()) {
			this.headers.add(limits(request), result, response::setHeader);
		}
	}

	/**
	 * Adds the concurrency permits a request holds to the response's limit headers.
	 * @param request the request that holds them
	 * @param response its response
	 * @param permits the permits
	 */
	public void addHeaders(HttpServletRequest request, HttpServletResponse response, InFlightPermits permits) {
		if (this.headers.mode() != HeadersMode.NONE && !response.isCommitted()) {
			for (ConcurrencyPermit permit : permits.held()) {
				this.headers.addInFlight(limits(request), permit, response::setHeader);
			}
		}
	}

	/**
	 * Writes a 429 for a rejecting decision, with its limit headers. The response must
	 * not be committed.
	 * @param request the request
	 * @param response the response
	 * @param bucket the bucket that rejected
	 * @param decision the rejecting decision
	 * @throws IOException when the body cannot be written
	 */
	public void writeRejection(HttpServletRequest request, HttpServletResponse response, String bucket,
			Decision decision) throws IOException {
		if (this.headers.mode() != HeadersMode.NONE) {
			// Idempotent: the decision may already be in the headers (filter, observer).
			this.headers.addRejection(limits(request), bucket, decision, response::setHeader);
		}
		write(response, RateLimitProblem.quotaExceeded(bucket, decision, request.getRequestURI()));
	}

	/**
	 * Writes a 400 for a request that lacks what a filter rule keys it by.
	 * @param request the request
	 * @param response the response
	 * @throws IOException when the body cannot be written
	 */
	public void writeMissingKey(HttpServletRequest request, HttpServletResponse response) throws IOException {
		write(response, RateLimitProblem.missingKey(request.getRequestURI()));
	}

	/**
	 * Writes a 503 for a request that could not be decided because the store is
	 * unavailable and {@code ratelimit.failure-mode} is {@code closed}.
	 * @param request the request
	 * @param response the response
	 * @throws IOException when the body cannot be written
	 */
	public void writeUnavailable(HttpServletRequest request, HttpServletResponse response) throws IOException {
		write(response, RateLimitProblem.unavailable(request.getRequestURI()));
	}

	private static ResponseLimits limits(HttpServletRequest request) {
		Object existing = request.getAttribute(RateLimitHeaders.ATTRIBUTE);
		if (existing instanceof ResponseLimits limits) {
			return limits;
		}
		ResponseLimits limits = new ResponseLimits();
		request.setAttribute(RateLimitHeaders.ATTRIBUTE, limits);
		return limits;
	}

	private static void write(HttpServletResponse response, RateLimitProblem problem) throws IOException {
		response.setStatus(problem.status());
		if (problem.retryAfter() != null) {
			response.setHeader(HttpHeaders.RETRY_AFTER, problem.retryAfter());
		}
		byte[] bytes = problem.body().getBytes(StandardCharsets.UTF_8);
		response.setContentType(RateLimitProblem.CONTENT_TYPE);
		response.setContentLength(bytes.length);
		OutputStream out;
		try {
			out = response.getOutputStream();
		}
		catch (IllegalStateException ex) {
			// A handler already took the writer before failing.
			response.setCharacterEncoding(StandardCharsets.UTF_8.name());
			response.getWriter().write(problem.body());
			return;
		}
		out.write(bytes);
	}

}
