package io.github.ratelimit.web.reactive;

import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitProblem;

/**
 * The checks of a whole 429 response through {@link WebTestClient}: status,
 * {@code Retry-After}, content type, the draft headers, and every member of the problem
 * body, for one rejecting bucket with one limit.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class QuotaExceededResponse {

	private QuotaExceededResponse() {
	}

	/**
	 * Asserts a 429 of one bucket.
	 * @param response the response
	 * @param bucket the bucket that rejected
	 * @param retryAfterSeconds the expected {@code Retry-After}
	 * @param policy the expected {@code RateLimit-Policy}
	 * @param state the expected {@code RateLimit}
	 * @param instance the expected request path
	 * @return the body, for further checks
	 */
	public static WebTestClient.BodyContentSpec expect(WebTestClient.ResponseSpec response, String bucket,
			long retryAfterSeconds, String policy, String state, String instance) {
		return response.expectStatus()
			.isEqualTo(429)
			.expectHeader()
			.valueEquals("Retry-After", String.valueOf(retryAfterSeconds))
			.expectHeader()
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.expectHeader()
			.valueEquals(RateLimitHeaders.POLICY, policy)
			.expectHeader()
			.valueEquals(RateLimitHeaders.RATE_LIMIT, state)
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(RateLimitProblem.QUOTA_EXCEEDED_TYPE)
			.jsonPath("$.title")
			.isEqualTo(RateLimitProblem.QUOTA_EXCEEDED_TITLE)
			.jsonPath("$.status")
			.isEqualTo(429)
			.jsonPath("$.detail")
			.isEqualTo("Rate limit '" + bucket + "' exceeded; retry after " + retryAfterSeconds
					+ ((retryAfterSeconds == 1) ? " second." : " seconds."))
			.jsonPath("$.instance")
			.isEqualTo(instance)
			.jsonPath("$['violated-policies'][0]")
			.isEqualTo(bucket)
			.jsonPath("$['violated-policies'].length()")
			.isEqualTo(1);
	}

}
