/**
 * The parts of HTTP rate limiting that do not depend on a request stack: filter rules
 * (matching by path and method, key and cost expressions over the request object), the
 * {@code RateLimit} and legacy headers of a response, and the RFC 9457 problem bodies of
 * 429, 400 and 503 responses. {@code web.servlet} applies them to Spring MVC; a reactive
 * filter can apply the same ones.
 */
@NullMarked
package io.github.ratelimit.web;

import org.jspecify.annotations.NullMarked;
