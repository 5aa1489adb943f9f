/**
 * Reads the client's address of a reactive request, from the connection itself on Reactor
 * Netty, for the {@link io.github.ratelimit.clientip.ClientIpResolver}.
 */
@NullMarked
package io.github.ratelimit.clientip.reactive;

import org.jspecify.annotations.NullMarked;
