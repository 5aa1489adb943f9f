/**
 * The in-memory store.
 */
@NullMarked
package io.github.ratelimit.store.memory;

import org.jspecify.annotations.NullMarked;
