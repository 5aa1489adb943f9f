/**
 * The Redis store: one Lua script, one {@code EVALSHA} per decision.
 */
@NullMarked
package io.github.ratelimit.redis;

import org.jspecify.annotations.NullMarked;
