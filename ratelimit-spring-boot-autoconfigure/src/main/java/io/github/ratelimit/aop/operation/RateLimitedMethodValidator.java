package io.github.ratelimit.aop.operation;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ReflectionUtils;

import io.github.ratelimit.annotation.RateLimited;

/**
 * Parses the {@link RateLimited @RateLimited} annotations of every bean when it is
 * created, so that a bad expression, duration, limit or fallback fails application
 * startup (naming the class, method and value) instead of the first call. The advisor's
 * pointcut alone would not do: it stops at the first matching method of a class.
 * <p>
 * Register it from a {@code static} {@code @Bean} method with role
 * {@code INFRASTRUCTURE}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitedMethodValidator implements BeanPostProcessor {

	private final RateLimitedOperationSource source;

	/**
	 * Creates a validator.
	 * @param source parses (and caches) each method's operations
	 */
	public RateLimitedMethodValidator(RateLimitedOperationSource source) {
		this.source = Objects.requireNonNull(source, "'source' must not be null");
	}

	@Override
	public Object postProcessBeforeInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopProxyUtils.ultimateTargetClass(bean);
		if (AnnotationUtils.isCandidateClass(targetClass, RateLimited.class)) {
			// In a stable order (the JVM's is not): buckets register, and errors are
			// reported, the same way on every start.
			List<Method> methods = new ArrayList<>();
			ReflectionUtils.doWithMethods(targetClass, methods::add, ReflectionUtils.USER_DECLARED_METHODS);
			methods.sort(Comparator.comparing(Method::getName).thenComparing(Method::toGenericString));
			methods.forEach((method) -> this.source.getRateLimitedMethod(method, targetClass));
		}
		return bean;
	}

}
