/**
 * Micrometer Observation of rate limit decisions: an observation per decision
 * ({@code ratelimit.decision}) and per wait for a permit ({@code ratelimit.wait}),
 * current while the store is called, so that tracing nests the store's spans under them.
 */
@NullMarked
package io.github.ratelimit.observation;

import org.jspecify.annotations.NullMarked;
