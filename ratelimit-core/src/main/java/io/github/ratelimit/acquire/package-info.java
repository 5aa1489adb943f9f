/**
 * Taking permits for one call: the {@link io.github.ratelimit.acquire.Acquirer} that the
 * servlet filter, the {@code @RateLimited} interceptor and the direct
 * {@link io.github.ratelimit.RateLimiter} all go through. It decides the requests of a
 * call bucket by bucket (all or nothing, giving back what earlier buckets granted when a
 * later one rejects), waits through one {@link io.github.ratelimit.acquire.Waiter} (for a
 * permit, and for a leaky bucket slot), applies shadow mode, gives permits back, and
 * tells the {@link io.github.ratelimit.acquire.RateLimitObserver observers} (metrics,
 * endpoint counts, limit headers) what became of each request.
 */
@NullMarked
package io.github.ratelimit.acquire;

import org.jspecify.annotations.NullMarked;
