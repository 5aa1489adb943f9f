package io.github.ratelimit.observation;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;

/**
 * The context of a {@link RateLimitObservationDocumentation#DECISION decision}
 * observation: the request, the store, and once decided the result (or the store's
 * failure, as the observation's error).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitObservationContext extends Observation.Context {

	private final PermitRequest request;

	private final String store;

	private @Nullable RateLimitResult result;

	private boolean noPermit;

	/**
	 * Creates the context of one request's decision.
	 * @param request the request
	 * @param store the store's name
	 */
	public RateLimitObservationContext(PermitRequest request, String store) {
		this.request = request;
		this.store = store;
	}

	/**
	 * Returns the request.
	 * @return the request
	 */
	public PermitRequest getRequest() {
		return this.request;
	}

	/**
	 * Returns the store's name.
	 * @return the store's name, e.g. {@code redis}
	 */
	public String getStore() {
		return this.store;
	}

	/**
	 * Returns the final result, once there is one.
	 * @return the result; {@code null} before the decision and when the store failed
	 */
	public @Nullable RateLimitResult getResult() {
		return this.result;
	}

	/**
	 * Sets the final result.
	 * @param result the result
	 */
	public void setResult(RateLimitResult result) {
		this.result = result;
	}

	/**
	 * Returns whether the request was not decided after all: the concurrency limit asked
	 * in the same store call had no permit free.
	 * @return {@code true} when no permit was free
	 */
	public boolean isNoPermit() {
		return this.noPermit;
	}

	/**
	 * Marks the request as not decided for lack of a concurrency permit.
	 */
	public void setNoPermit() {
		this.noPermit = true;
	}

}
