/**
 * Concurrency limits: at most N calls in flight per key, across every instance that
 * shares a store, held as leases that come back when their holder dies.
 */
@NullMarked
package io.github.ratelimit.concurrency;

import org.jspecify.annotations.NullMarked;
