package io.github.ratelimit.spring;

/**
 * Told of every decision the {@link RateLimitService} makes: metrics count them, the web
 * layer writes limit headers. Called on the deciding thread; must be quick and must not
 * throw.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@FunctionalInterface
public interface RateLimitObserver {

	/**
	 * Called after each decision.
	 * @param result the decision and its outcome
	 */
	void onDecision(RateLimitResult result);

}
