/**
 * The {@code ratelimit} health indicator: the store, its circuit breaker and the failure
 * mode that applies while it fails.
 */
@NullMarked
package io.github.ratelimit.health;

import org.jspecify.annotations.NullMarked;
