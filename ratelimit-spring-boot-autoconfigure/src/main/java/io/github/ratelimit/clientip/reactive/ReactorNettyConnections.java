package io.github.ratelimit.clientip.reactive;

import org.jspecify.annotations.Nullable;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerRequest;

import io.github.ratelimit.clientip.ClientIpResolver;

/**
 * Reads a Reactor Netty request's connection: the channel's remote address, which no
 * forwarded header changes (the request's own {@code remoteAddress()} does, from any
 * client, when forwarded-header handling is on), and the headers as they arrived. Loaded
 * only when Reactor Netty is on the class path.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ReactorNettyConnections {

	private ReactorNettyConnections() {
	}

	static boolean isConnection(Object nativeRequest) {
		return nativeRequest instanceof HttpServerRequest && nativeRequest instanceof Connection;
	}

	static @Nullable String resolve(ClientIpResolver resolver, Object nativeRequest) {
		HttpServerRequest request = (HttpServerRequest) nativeRequest;
		String peer = ReactiveClientIp.peer(((Connection) nativeRequest).channel().remoteAddress());
		return resolver.resolve(peer, (name) -> request.requestHeaders().getAll(name));
	}

}
