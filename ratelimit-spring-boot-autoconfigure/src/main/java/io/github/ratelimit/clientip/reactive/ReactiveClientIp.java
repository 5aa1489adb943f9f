package io.github.ratelimit.clientip.reactive;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

import org.jspecify.annotations.Nullable;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.clientip.ClientIpResolver;

/**
 * The client's address of a reactive request. On Reactor Netty the connection and the
 * headers are read from the server's own request: Reactor Netty's forwarded-header
 * handling ({@code server.forward-headers-strategy=native}, which Spring Boot also turns
 * on by itself on a cloud platform such as Kubernetes) and Spring's
 * {@code ForwardedHeaderTransformer} ({@code framework}) both report the leftmost
 * {@code X-Forwarded-For} value, which any client can write, as the remote address. On
 * another server, the request's remote address and headers.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ReactiveClientIp {

	private static final boolean REACTOR_NETTY_PRESENT = ClassUtils
		.isPresent("reactor.netty.http.server.HttpServerRequest", ReactiveClientIp.class.getClassLoader());

	private ReactiveClientIp() {
	}

	/**
	 * Returns the client's address of a request.
	 * @param resolver works out the address
	 * @param request the request, possibly decorated or mutated
	 * @return the address, or {@code null} when the server does not know it
	 */
	public static @Nullable String resolve(ClientIpResolver resolver, ServerHttpRequest request) {
		if (REACTOR_NETTY_PRESENT) {
			Object nativeRequest = nativeRequest(request);
			if (nativeRequest != null && ReactorNettyConnections.isConnection(nativeRequest)) {
				return ReactorNettyConnections.resolve(resolver, nativeRequest);
			}
		}
		return resolver.resolve(peer(request.getRemoteAddress()), (name) -> request.getHeaders().getOrEmpty(name));
	}

	/**
	 * Returns the address of a connection as text.
	 * @param remote the remote address of the connection
	 * @return the address without the port, or {@code null} when it is no IP socket
	 * address (e.g. a Unix domain socket's)
	 */
	static @Nullable String peer(@Nullable SocketAddress remote) {
		if (!(remote instanceof InetSocketAddress socket)) {
			return null;
		}
		InetAddress address = socket.getAddress();
		return (address != null) ? address.getHostAddress() : socket.getHostString();
	}

	private static @Nullable Object nativeRequest(ServerHttpRequest request) {
		try {
			return ServerHttpRequestDecorator.getNativeRequest(request);
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			// A request of no known server, or a mock one: its own address it is.
			return null;
		}
	}

}
