/**
 * Spring Cloud Gateway: a {@code RateLimiter} for the {@code RequestRateLimiter} route
 * filter that takes its permits from the starter's buckets through the
 * {@link io.github.ratelimit.acquire.Acquirer}.
 */
@NullMarked
package io.github.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;
