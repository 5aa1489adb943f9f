/**
 * The {@code @RateLimited} annotation.
 */
@NullMarked
package io.github.ratelimit.annotation;

import org.jspecify.annotations.NullMarked;
