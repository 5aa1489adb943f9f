package io.github.ratelimit.status;

/**
 * Tells the current {@link StoreStatus}, for the endpoint and the metrics.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@FunctionalInterface
public interface StoreStatusSource {

	/**
	 * Returns the store's status now.
	 * @return the status
	 */
	StoreStatus status();

}
