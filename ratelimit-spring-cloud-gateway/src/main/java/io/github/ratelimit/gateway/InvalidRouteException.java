package io.github.ratelimit.gateway;

/**
 * A route's {@code RequestRateLimiter} arguments that {@link BucketRateLimiter} cannot
 * apply: a bucket no configuration defines, a cost below 1. Thrown while the gateway
 * builds the route (with {@code fail-on-route-definition-error}, the gateway's default,
 * startup fails and Spring Boot shows the description and the action), or by the route's
 * requests when nothing names a bucket for it.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class InvalidRouteException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String routeId;

	private final String description;

	private final String action;

	/**
	 * Creates the exception.
	 * @param routeId the route at fault
	 * @param description what is wrong, naming the route and the argument
	 * @param action how to fix it
	 */
	public InvalidRouteException(String routeId, String description, String action) {
		super(description + " " + action);
		this.routeId = routeId;
		this.description = description;
		this.action = action;
	}

	/**
	 * Returns the route at fault.
	 * @return the route id
	 */
	public String getRouteId() {
		return this.routeId;
	}

	/**
	 * Returns what is wrong.
	 * @return the description
	 */
	public String getDescription() {
		return this.description;
	}

	/**
	 * Returns how to fix it.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}

}
