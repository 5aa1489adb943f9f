/**
 * Micrometer meters for decisions, store latency and the failure state.
 */
@NullMarked
package io.github.ratelimit.metrics;

import org.jspecify.annotations.NullMarked;
