package io.github.ratelimit.observation;

import io.micrometer.observation.Observation;

import io.github.ratelimit.acquire.PermitRequest;

/**
 * The context of a {@link RateLimitObservationDocumentation#WAIT wait} observation.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitWaitObservationContext extends Observation.Context {

	private final PermitRequest request;

	private final String store;

	private final long waitMicros;

	/**
	 * Creates the context of one wait for a permit.
	 * @param request the request that waits
	 * @param store the store's name
	 * @param waitMicros how long the wait is meant to last, in microseconds
	 */
	public RateLimitWaitObservationContext(PermitRequest request, String store, long waitMicros) {
		this.request = request;
		this.store = store;
		this.waitMicros = waitMicros;
	}

	/**
	 * Returns the request that waits.
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
	 * Returns how long the wait is meant to last: the rejection's retry-after, within the
	 * request's {@code maxWait}.
	 * @return the planned wait, in microseconds
	 */
	public long getWaitMicros() {
		return this.waitMicros;
	}

}
