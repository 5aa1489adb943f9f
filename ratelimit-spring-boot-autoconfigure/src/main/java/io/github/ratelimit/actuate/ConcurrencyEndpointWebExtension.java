package io.github.ratelimit.actuate;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import io.github.ratelimit.store.RateLimitStoreException;

/**
 * The HTTP side of {@link ConcurrencyEndpoint}'s reads and releases of one key: 404 for
 * an unknown bucket, and 503 with a {@code message} while the store cannot answer (Redis
 * down or restarting), which is when an operator looks, rather than a 500 and a stack
 * trace in the log.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@EndpointWebExtension(endpoint = ConcurrencyEndpoint.class)
public class ConcurrencyEndpointWebExtension {

	private final ConcurrencyEndpoint endpoint;

	/**
	 * Creates the extension.
	 * @param endpoint the endpoint
	 */
	public ConcurrencyEndpointWebExtension(ConcurrencyEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Reads who holds one key's permits; see {@link ConcurrencyEndpoint#holders}.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return 200 with the holders, 404 for an unknown bucket, or 503 with a message
	 */
	@ReadOperation
	public WebEndpointResponse<Object> holders(@Selector String bucket, @Selector String key) {
		return answer(() -> this.endpoint.holders(bucket, key));
	}

	/**
	 * Takes back every permit of one key; see {@link ConcurrencyEndpoint#release}.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return 200 with the permits that were held, 404 for an unknown bucket, or 503 with
	 * a message
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> release(@Selector String bucket, @Selector String key) {
		return answer(() -> this.endpoint.release(bucket, key));
	}

	private static WebEndpointResponse<Object> answer(Supplier<@Nullable Object> operation) {
		try {
			Object body = operation.get();
			return (body != null) ? new WebEndpointResponse<>(body)
					: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		catch (RateLimitStoreException ex) {
			return RateLimitsEndpointWebExtension.refusal(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE,
					"The concurrency store cannot answer now (" + ex.getMessage()
							+ "); the permits of calls that started meanwhile are counted by each instance "
							+ "(ratelimit.failure-mode). Try again once it is back.");
		}
	}

}
