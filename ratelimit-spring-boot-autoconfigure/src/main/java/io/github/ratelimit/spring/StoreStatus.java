package io.github.ratelimit.spring;

/**
 * The state of the store as operators see it.
 *
 * @param store the store name ({@code redis}, {@code memory})
 * @param failureMode what happens while it fails
 * @param degraded whether decisions currently bypass it (circuit breaker open)
 * @param failures how many calls to it failed since startup
 * @author ratelimit-spring-boot-starter authors
 */
public record StoreStatus(String store, FailureMode failureMode, boolean degraded, long failures) {

}
