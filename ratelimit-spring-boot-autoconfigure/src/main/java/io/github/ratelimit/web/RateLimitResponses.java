package io.github.ratelimit.web;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

import io.github.ratelimit.Decision;
import io.github.ratelimit.web.Policies.Policy;

/**
 * Writes the error responses of rate limiting: 429 Too Many Requests when a limit
 * rejects, and 400 Bad Request when a filter rule cannot key a request.
 * <p>
 * A 429 carries the limit headers, {@code Retry-After} in whole seconds rounded up (a
 * client that waits that long is allowed), and an RFC 9457
 * {@code application/problem+json} body of the draft's quota-exceeded type, with
 * {@code violated-policies} naming the limits that rejected. A request whose cost exceeds
 * a limit's capacity is rejected with no {@code Retry-After}: no wait would help, and the
 * detail says so.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitResponses {

	/**
	 * The problem type of draft-ietf-httpapi-ratelimit-headers-10, section "Quota
	 * Exceeded" (to be registered with IANA).
	 */
	public static final String QUOTA_EXCEEDED_TYPE = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** The title the draft gives the quota-exceeded problem type. */
	public static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

	private final RateLimitHeaders headers;

	/**
	 * Creates the response writer.
	 * @param headers writes the limit headers
	 */
	public RateLimitResponses(RateLimitHeaders headers) {
		this.headers = Objects.requireNonNull(headers, "'headers' must not be null");
	}

	/**
	 * Returns the header writer, shared with the filter and the observer.
	 * @return the header writer
	 */
	public RateLimitHeaders headers() {
		return this.headers;
	}

	/**
	 * Writes a 429 for a rejecting decision. The response must not be committed.
	 * @param request the request
	 * @param response the response
	 * @param bucket the bucket that rejected
	 * @param decision the rejecting decision
	 * @throws IOException when the body cannot be written
	 */
	public void writeRejection(HttpServletRequest request, HttpServletResponse response, String bucket,
			Decision decision) throws IOException {
		// Idempotent: the decision may already be in the headers (filter, observer).
		this.headers.addRejection(request, response, bucket, decision);
		response.setStatus(HttpStatus.TOO_MANY_REQUESTS.value());
		String detail;
		if (decision.retryable()) {
			long seconds = Math.max(1, Policies.ceilSeconds(decision.retryAfterMicros()));
			response.setHeader(HttpHeaders.RETRY_AFTER, String.valueOf(seconds));
			detail = "Rate limit '" + bucket + "' exceeded; retry after " + seconds
					+ ((seconds == 1) ? " second." : " seconds.");
		}
		else {
			detail = "The request costs more than rate limit '" + bucket + "' allows at once; retrying will not help.";
		}
		String body = new ProblemJson().string("type", QUOTA_EXCEEDED_TYPE)
			.string("title", QUOTA_EXCEEDED_TITLE)
			.number("status", HttpStatus.TOO_MANY_REQUESTS.value())
			.string("detail", detail)
			.string("instance", request.getRequestURI())
			.strings("violated-policies", violatedPolicies(bucket, decision))
			.build();
		writeBody(response, body);
	}

	/**
	 * Writes a 400 for a request that lacks what a filter rule keys it by (the key
	 * expression gave {@code null}, e.g. a missing API key header).
	 * @param request the request
	 * @param response the response
	 * @throws IOException when the body cannot be written
	 */
	public void writeMissingKey(HttpServletRequest request, HttpServletResponse response) throws IOException {
		response.setStatus(HttpStatus.BAD_REQUEST.value());
		String body = new ProblemJson().string("type", "about:blank")
			.string("title", HttpStatus.BAD_REQUEST.getReasonPhrase())
			.number("status", HttpStatus.BAD_REQUEST.value())
			.string("detail", "The request lacks the value that its rate limit is keyed by.")
			.string("instance", request.getRequestURI())
			.build();
		writeBody(response, body);
	}

	/**
	 * Writes a 503 for a request that could not be decided because the store is
	 * unavailable and {@code ratelimit.failure-mode} is {@code closed}.
	 * @param request the request
	 * @param response the response
	 * @throws IOException when the body cannot be written
	 */
	public void writeUnavailable(HttpServletRequest request, HttpServletResponse response) throws IOException {
		response.setStatus(HttpStatus.SERVICE_UNAVAILABLE.value());
		response.setHeader(HttpHeaders.RETRY_AFTER, "1");
		String body = new ProblemJson().string("type", "about:blank")
			.string("title", HttpStatus.SERVICE_UNAVAILABLE.getReasonPhrase())
			.number("status", HttpStatus.SERVICE_UNAVAILABLE.value())
			.string("detail", "Rate limits cannot be checked right now; try again shortly.")
			.string("instance", request.getRequestURI())
			.build();
		writeBody(response, body);
	}

	private static List<String> violatedPolicies(String bucket, Decision decision) {
		List<Policy> policies = Policies.of(bucket, decision);
		List<String> names = new ArrayList<>(policies.size());
		for (Policy policy : policies) {
			if (!policy.decision().allowed()) {
				names.add(policy.name());
			}
		}
		if (names.isEmpty()) {
			// A rejection made outside a store has no per-limit detail.
			policies.forEach((policy) -> names.add(policy.name()));
		}
		return names;
	}

	private static void writeBody(HttpServletResponse response, String body) throws IOException {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		// JSON is UTF-8 by definition (RFC 8259), so no charset parameter.
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setContentLength(bytes.length);
		OutputStream out;
		try {
			out = response.getOutputStream();
		}
		catch (IllegalStateException ex) {
			// A handler already took the writer before failing.
			response.setCharacterEncoding(StandardCharsets.UTF_8.name());
			response.getWriter().write(body);
			return;
		}
		out.write(bytes);
	}

}
