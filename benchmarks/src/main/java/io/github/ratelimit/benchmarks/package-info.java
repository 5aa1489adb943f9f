/**
 * Benchmarks of the rate limit stores side by side with their peers (JMH for the
 * in-process stores, small load drivers for Redis and HTTP), and the code that draws the
 * pictures in {@code docs/}.
 */
@NullMarked
package io.github.ratelimit.benchmarks;

import org.jspecify.annotations.NullMarked;
