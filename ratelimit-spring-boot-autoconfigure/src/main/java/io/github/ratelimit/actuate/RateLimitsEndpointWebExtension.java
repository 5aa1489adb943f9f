package io.github.ratelimit.actuate;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The HTTP side of {@link RateLimitsEndpoint}'s reset: 204 when the key was reset, 404
 * when the bucket is unknown (a typo must not look like success).
 *
 * @author ratelimit-spring-boot-starter authors
 */
@EndpointWebExtension(endpoint = RateLimitsEndpoint.class)
public class RateLimitsEndpointWebExtension {

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
	 * @return 204, or 404 for an unknown bucket
	 */
	@DeleteOperation
	public WebEndpointResponse<Void> reset(@Selector String bucket, @Selector String key) {
		Boolean reset = this.endpoint.reset(bucket, key);
		return new WebEndpointResponse<>(
				(reset != null) ? WebEndpointResponse.STATUS_NO_CONTENT : WebEndpointResponse.STATUS_NOT_FOUND);
	}

}
