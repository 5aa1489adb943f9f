/**
 * The store's failure mode and status, shared by the failover store, the endpoint and the
 * metrics.
 */
@NullMarked
package io.github.ratelimit.spring;

import org.jspecify.annotations.NullMarked;
