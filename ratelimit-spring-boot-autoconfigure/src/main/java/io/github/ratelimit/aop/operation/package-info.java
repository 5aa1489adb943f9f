/**
 * The startup side of {@code @RateLimited}: finding the annotations of a method, parsing
 * and checking them once (buckets, expressions, durations, fallbacks) into immutable
 * operations, and a post-processor that does so for every bean as it is created, so that
 * a mistake fails startup.
 */
@NullMarked
package io.github.ratelimit.aop.operation;

import org.jspecify.annotations.NullMarked;
