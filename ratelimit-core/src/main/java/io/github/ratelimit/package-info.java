/**
 * Core model of rate limiting: limits, decisions, the direct API.
 */
@NullMarked
package io.github.ratelimit;

import org.jspecify.annotations.NullMarked;
