package io.github.ratelimit.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import io.github.ratelimit.bucket.LiveLimits.ChangeRejectedException;

/**
 * The HTTP side of {@link RateLimitsEndpoint}'s reset: 204 when the key was reset, 404
 * when the bucket is unknown (a typo must not look like success); and of its live limit
 * changes: 200 with the bucket as it is now, 400 with the property at fault, 403 while
 * live changes are off, 404 for an unknown bucket, 503 when the store cannot save the
 * change (or other changes of the bucket kept being saved first), each with a
 * {@code message}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointWebExtension {

	private static final int STATUS_FORBIDDEN = 403;

	private final RateLimitsEndpoint endpoint;

	/**
	 * Creates the extension.
	 * @param endpoint the endpoint
	 */
	public RateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Resets one key.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param zone the time zone of the key's calendar windows, for a bucket whose zone is
	 * set per call; {@code null} for the bucket's own
	 * @return 204, 400 for a zone that does not apply, or 404 for an unknown bucket
	 */
	@DeleteOperation
	public WebEndpointResponse<Void> reset(@Selector String bucket, @Selector String key, @Nullable String zone) {
		Boolean reset = this.endpoint.reset(bucket, key, zone);
		return new WebEndpointResponse<>(
				(reset != null) ? WebEndpointResponse.STATUS_NO_CONTENT : WebEndpointResponse.STATUS_NOT_FOUND);
	}

	/**
	 * Changes a bucket's limits at runtime; see
	 * {@link RateLimitsEndpoint#setLimits(String, String, String, String, String, String, String, String, String, String, SecurityContext)}.
	 * @param bucket the bucket name
	 * @param limit permits per window
	 * @param window the window
	 * @param burst the burst
	 * @param segments the sliding window counter segments
	 * @param penalty how long a key is blocked once the limit rejects it
	 * @param calendar a calendar window instead of the window
	 * @param zone the time zone of a calendar window
	 * @param algorithm the algorithm
	 * @param index which limit to change, for a bucket with several
	 * @param securityContext who asks
	 * @return 200 with the bucket, or 400, 403, 404 or 503 with a message
	 */
	@WriteOperation
	public WebEndpointResponse<Object> setLimits(@Selector String bucket, @Nullable String limit,
			@Nullable String window, @Nullable String burst, @Nullable String segments, @Nullable String penalty,
			@Nullable String calendar, @Nullable String zone, @Nullable String algorithm, @Nullable String index,
			SecurityContext securityContext) {
		try {
			return new WebEndpointResponse<>(this.endpoint.setLimits(bucket, limit, window, burst, segments, penalty,
					calendar, zone, algorithm, index, securityContext));
		}
		catch (ChangeRejectedException ex) {
			return rejected(ex);
		}
	}

	/**
	 * Clears a bucket's live change.
	 * @param bucket the bucket name
	 * @param securityContext who asks
	 * @return 200 with the bucket, or 403, 404 or 503 with a message
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> clearLimits(@Selector String bucket, SecurityContext securityContext) {
		try {
			return new WebEndpointResponse<>(this.endpoint.clearLimits(bucket, securityContext));
		}
		catch (ChangeRejectedException ex) {
			return rejected(ex);
		}
	}

	private static WebEndpointResponse<Object> rejected(ChangeRejectedException ex) {
		int status = switch (ex.getReason()) {
			case DISABLED -> STATUS_FORBIDDEN;
			case UNKNOWN_BUCKET -> WebEndpointResponse.STATUS_NOT_FOUND;
			case INVALID -> WebEndpointResponse.STATUS_BAD_REQUEST;
			case UNAVAILABLE, CONTENDED -> WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE;
		};
		return refusal(status, String.valueOf(ex.getMessage()));
	}

	/**
	 * Returns the answer to a request this endpoint refuses: the status, and a body with
	 * the status and a message that says what is wrong and what to do.
	 * @param status the HTTP status
	 * @param message what is wrong and what to do
	 * @return the answer
	 */
	static WebEndpointResponse<Object> refusal(int status, String message) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("status", status);
		body.put("message", message);
		return new WebEndpointResponse<>(body, status);
	}

}
