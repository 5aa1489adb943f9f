package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

import io.github.ratelimit.Decision;
import io.github.ratelimit.web.Policies.Policy;

/**
 * An error response of rate limiting, ready to write on any request stack: 429 Too Many
 * Requests when a limit rejects, 400 Bad Request when a filter rule cannot key a request,
 * 503 Service Unavailable when the store cannot decide. The body is an RFC 9457
 * {@code application/problem+json} document.
 * <p>
 * A 429 carries {@code Retry-After} in whole seconds rounded up (a client that waits that
 * long is allowed), and a body of the draft's quota-exceeded type with
 * {@code violated-policies} naming the limits that rejected. A request whose cost exceeds
 * a limit's capacity is rejected with no {@code Retry-After}: no wait would help, and the
 * detail says so.
 *
 * @param status the HTTP status
 * @param retryAfter the {@code Retry-After} value, or {@code null} for none
 * @param body the problem document
 * @author ratelimit-spring-boot-starter authors
 */
public record RateLimitProblem(int status, @Nullable String retryAfter, String body) {

	/**
	 * The problem type of draft-ietf-httpapi-ratelimit-headers-10, section "Quota
	 * Exceeded" (to be registered with IANA).
	 */
	public static final String QUOTA_EXCEEDED_TYPE = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** The title the draft gives the quota-exceeded problem type. */
	public static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

	/** The media type of the body. JSON is UTF-8 by definition (RFC 8259). */
	public static final String CONTENT_TYPE = "application/problem+json";

	/**
	 * Returns the 429 for a rejecting decision.
	 * @param bucket the bucket that rejected
	 * @param decision the rejecting decision
	 * @param instance the request path, for the {@code instance} member
	 * @return the problem
	 */
	public static RateLimitProblem quotaExceeded(String bucket, Decision decision, String instance) {
		String retryAfter = null;
		String detail;
		long seconds = RateLimitHeaders.retryAfterSeconds(decision);
		if (seconds > 0 && decision.isConcurrency()) {
			retryAfter = String.valueOf(seconds);
			detail = "Concurrency limit '" + bucket + "' reached: " + decision.limit()
					+ " requests in flight; retry after about " + seconds + ((seconds == 1) ? " second." : " seconds.");
		}
		else if (seconds > 0) {
			retryAfter = String.valueOf(seconds);
			detail = "Rate limit '" + bucket + "' exceeded; retry after " + seconds
					+ ((seconds == 1) ? " second." : " seconds.");
		}
		else {
			detail = "The request costs more than rate limit '" + bucket + "' allows at once; retrying will not help.";
		}
		HttpStatus status = HttpStatus.TOO_MANY_REQUESTS;
		String body = new ProblemJson().string("type", QUOTA_EXCEEDED_TYPE)
			.string("title", QUOTA_EXCEEDED_TITLE)
			.number("status", status.value())
			.string("detail", detail)
			.string("instance", instance)
			.strings("violated-policies", violatedPolicies(bucket, decision))
			.build();
		return new RateLimitProblem(status.value(), retryAfter, body);
	}

	/**
	 * Returns the 400 for a request that lacks what a filter rule keys it by (the key
	 * expression gave {@code null}, e.g. a missing API key header).
	 * @param instance the request path
	 * @return the problem
	 */
	public static RateLimitProblem missingKey(String instance) {
		return plain(HttpStatus.BAD_REQUEST, null, "The request lacks the value that its rate limit is keyed by.",
				instance);
	}

	/**
	 * Returns the 503 for a request that could not be decided because the store is
	 * unavailable and {@code ratelimit.failure-mode} is {@code closed}.
	 * @param instance the request path
	 * @return the problem
	 */
	public static RateLimitProblem unavailable(String instance) {
		return plain(HttpStatus.SERVICE_UNAVAILABLE, "1", "Rate limits cannot be checked right now; try again shortly.",
				instance);
	}

	private static RateLimitProblem plain(HttpStatus status, @Nullable String retryAfter, String detail,
			String instance) {
		String body = new ProblemJson().string("type", "about:blank")
			.string("title", status.getReasonPhrase())
			.number("status", status.value())
			.string("detail", detail)
			.string("instance", instance)
			.build();
		return new RateLimitProblem(status.value(), retryAfter, body);
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

}
