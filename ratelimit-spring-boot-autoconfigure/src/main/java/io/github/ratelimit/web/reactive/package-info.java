/**
 * Rate limiting for reactive (WebFlux) web applications: the web filter for
 * {@code ratelimit.filter.rules}, the response writer, and the exception handler that
 * turns a rejection from a handler into a 429. Nothing here blocks a thread: permits are
 * taken through the acquirer's asynchronous path.
 */
@NullMarked
package io.github.ratelimit.web.reactive;

import org.jspecify.annotations.NullMarked;
