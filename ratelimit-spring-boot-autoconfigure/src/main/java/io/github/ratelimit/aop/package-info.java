/**
 * The {@code @RateLimited} interceptor: an advisor whose pointcut matches annotated
 * methods, an operation source that parses each annotation once at startup, and an
 * interceptor that decides, waits, falls back and refunds per call, blocking or not
 * depending on the method's return type.
 */
@NullMarked
package io.github.ratelimit.aop;

import org.jspecify.annotations.NullMarked;
