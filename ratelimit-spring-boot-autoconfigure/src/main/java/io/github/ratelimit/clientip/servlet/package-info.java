/**
 * Reads the client's address of a servlet request, as the servlet container reports the
 * connection, for the {@link io.github.ratelimit.clientip.ClientIpResolver}.
 */
@NullMarked
package io.github.ratelimit.clientip.servlet;

import org.jspecify.annotations.NullMarked;
