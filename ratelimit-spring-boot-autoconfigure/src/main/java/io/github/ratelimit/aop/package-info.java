/**
 * The per-call side of {@code @RateLimited}: the advisor and its pointcut, and the
 * interceptor that evaluates a call's expressions, takes its permits through the
 * {@link io.github.ratelimit.acquire.Acquirer}, calls the method or its fallback, and
 * gives back what {@code refundWhen} asks for, blocking or not depending on the method's
 * return type.
 */
@NullMarked
package io.github.ratelimit.aop;

import org.jspecify.annotations.NullMarked;
