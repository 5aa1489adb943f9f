/**
 * The application both sides of {@code http-vs-bucket4j-starter} run.
 */
@NullMarked
package io.github.ratelimit.benchmarks.app;

import org.jspecify.annotations.NullMarked;
