package io.github.ratelimit.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotationUtils;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.aop.operation.RateLimitedOperationSource;

/**
 * Matches the methods that {@link RateLimitedOperationSource} finds operations for. The
 * class filter skips classes that cannot carry the annotation ({@code java.*}) before any
 * method is examined.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RateLimitedPointcut extends StaticMethodMatcherPointcut {

	private final RateLimitedOperationSource source;

	RateLimitedPointcut(RateLimitedOperationSource source) {
		this.source = source;
		setClassFilter((candidate) -> AnnotationUtils.isCandidateClass(candidate, RateLimited.class));
	}

	@Override
	public boolean matches(Method method, @Nullable Class<?> targetClass) {
		return this.source.isRateLimited(method, targetClass);
	}

}
