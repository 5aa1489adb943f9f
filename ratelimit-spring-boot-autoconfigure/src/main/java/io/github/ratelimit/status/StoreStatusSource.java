package io.github.ratelimit.status;

/**
 * Tells the current {@link StoreStatus}, for the endpoint, the metrics and the health
 * indicator.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface StoreStatusSource {

	/**
	 * Returns the store's status now.
	 * @return the status
	 */
	StoreStatus status();

	/**
	 * Returns the store's status after trying the store once when it is degraded, so that
	 * a health check sees a recovery that no request has seen yet (an instance taken out
	 * of the load balancer gets no requests). The default returns {@link #status()}.
	 * @return the status
	 */
	default StoreStatus probe() {
		return status();
	}

}
