/**
 * The {@code @RateLimited} aspect and its expressions.
 */
@NullMarked
package io.github.ratelimit.aop;

import org.jspecify.annotations.NullMarked;
