package io.github.ratelimit.web.servlet;

import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.clientip.servlet.ServletClientIp;
import io.github.ratelimit.web.RequestVariables;

/**
 * What filter rules see of a servlet request: the {@code HttpServletRequest} as
 * {@code #request}, and the client's address as {@code #clientIp}, which the
 * {@link ClientIpResolver} works out from the connection and the proxies it trusts.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ServletRequestVariables implements RequestVariables {

	private final ClientIpResolver clientIps;

	/**
	 * Creates the variables.
	 * @param clientIps works out {@code #clientIp}
	 */
	public ServletRequestVariables(ClientIpResolver clientIps) {
		this.clientIps = Objects.requireNonNull(clientIps, "'clientIps' must not be null");
	}

	@Override
	public Class<?> requestType() {
		return HttpServletRequest.class;
	}

	@Override
	public Object request(Object exchange) {
		return exchange;
	}

	@Override
	public @Nullable String clientIp(Object exchange) {
		return ServletClientIp.resolve(this.clientIps, (HttpServletRequest) exchange);
	}

}
