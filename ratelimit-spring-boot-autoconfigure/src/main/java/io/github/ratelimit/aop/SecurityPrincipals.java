package io.github.ratelimit.aop;

import org.jspecify.annotations.Nullable;

import org.springframework.security.core.context.SecurityContextHolder;

/**
 * Reads the Spring Security {@code Authentication} of the current thread. Loaded only
 * when Spring Security is present (see {@link CallerContext}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class SecurityPrincipals {

	private SecurityPrincipals() {
	}

	static @Nullable Object current() {
		return SecurityContextHolder.getContext().getAuthentication();
	}

}
