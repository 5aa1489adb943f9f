/**
 * What happens while the store fails: per-instance fallback, allow or reject, behind a
 * circuit breaker.
 */
@NullMarked
package io.github.ratelimit.failover;

import org.jspecify.annotations.NullMarked;
