/**
 * Rate limiting for servlet web applications: the filter, the limit headers and the 429
 * response.
 */
@NullMarked
package io.github.ratelimit.web;

import org.jspecify.annotations.NullMarked;
