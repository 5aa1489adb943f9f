package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractBeanFactoryPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;

/**
 * Applies the {@link ConcurrencyLimitedInterceptor} to every method with
 * {@link io.github.ratelimit.annotation.ConcurrencyLimited @ConcurrencyLimited} (on the
 * method, or public methods of an annotated class), given by bean name as Spring's own
 * advisors are. Remembers the methods it matched, so that the interceptor checks them all
 * at startup. Ordered ahead of {@code @Transactional}, as the rate limit advisor is: a
 * call waiting for a permit holds no database connection. Ordered ahead of the rate limit
 * advisor too: a method limited both ways takes its permit before its rate limits are
 * asked, as a filter rule does, and hands it to the rate limit interceptor to take with
 * their decision.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class ConcurrencyLimitedAdvisor extends AbstractBeanFactoryPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final Set<Method> matched = ConcurrentHashMap.newKeySet();

	private final Pointcut pointcut = new StaticMethodMatcherPointcut() {

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			Method specific = org.springframework.aop.support.AopUtils.getMostSpecificMethod(method, targetClass);
			boolean annotated = ConcurrencyLimitedInterceptor.annotationOf(specific) != null
					&& (specific.isAnnotationPresent(io.github.ratelimit.annotation.ConcurrencyLimited.class)
							|| Modifier.isPublic(specific.getModifiers()))
					&& specific.getDeclaringClass() != Object.class;
			if (annotated) {
				ConcurrencyLimitedAdvisor.this.matched.add(specific);
			}
			return annotated;
		}

	};

	/**
	 * Creates the advisor.
	 */
	public ConcurrencyLimitedAdvisor() {
		setOrder(RateLimitedAdvisor.DEFAULT_ORDER - 1);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	/**
	 * Returns the methods matched so far.
	 * @return the methods with {@code @ConcurrencyLimited} of the beans proxied
	 */
	public List<Method> matchedMethods() {
		return List.copyOf(this.matched);
	}

}
