package io.github.ratelimit.gateway;

import java.util.Objects;

import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.clientip.reactive.ReactiveClientIp;

/**
 * A {@link KeyResolver} that keys a route by the client's address: the same
 * {@code #clientIp} that filter rules and {@code @RateLimited} read, from the connection
 * and the proxies {@code ratelimit.client-ip} trusts, so that a client cannot pick its
 * key with a forwarded header of its own. A route uses it with {@code key-resolver:
 * "#{@clientIpKeyResolver}"}. A request whose address the server does not know gets no
 * key, which the {@code RequestRateLimiter} filter refuses ({@code deny-empty-key}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class ClientIpKeyResolver implements KeyResolver {

	private final ClientIpResolver clientIps;

	/**
	 * Creates the key resolver.
	 * @param clientIps works out the client's address
	 */
	public ClientIpKeyResolver(ClientIpResolver clientIps) {
		this.clientIps = Objects.requireNonNull(clientIps, "'clientIps' must not be null");
	}

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		return Mono.justOrEmpty(ReactiveClientIp.resolve(this.clientIps, exchange.getRequest()));
	}

}
