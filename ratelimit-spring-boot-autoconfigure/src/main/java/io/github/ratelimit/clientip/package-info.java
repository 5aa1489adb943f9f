/**
 * The client's address behind proxies, for {@code #clientIp}: the address of the
 * connection, and the forwarded header walked from the right past the proxies that
 * {@code ratelimit.client-ip} trusts. One {@link ClientIpResolver} serves the servlet
 * filter, the reactive filter, {@code @RateLimited} expressions and the gateway;
 * {@code clientip.servlet} and {@code clientip.reactive} read a request of each stack for
 * it. Nothing here depends on a request stack.
 */
@NullMarked
package io.github.ratelimit.clientip;

import org.jspecify.annotations.NullMarked;
