/**
 * Rate limiting for servlet web applications: the filter for
 * {@code ratelimit.filter.rules}, the response writer, the exception resolver that turns
 * a rejection thrown by a controller into a 429, and the observer that adds limit headers
 * for decisions made while a request is handled.
 */
@NullMarked
package io.github.ratelimit.web.servlet;

import org.jspecify.annotations.NullMarked;
