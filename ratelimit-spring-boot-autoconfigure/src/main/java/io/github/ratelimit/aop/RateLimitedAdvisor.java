package io.github.ratelimit.aop;

import java.util.Objects;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractBeanFactoryPointcutAdvisor;
import org.springframework.core.Ordered;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.aop.operation.RateLimitedOperationSource;

/**
 * Applies the {@link RateLimitedInterceptor} to every method with
 * {@link RateLimited @RateLimited} (on the method or its class). Register it with role
 * {@code INFRASTRUCTURE}, next to an auto-proxy creator.
 * <p>
 * Give it the interceptor by bean name ({@link #setAdviceBeanName(String)}), as Spring's
 * own advisors do: the interceptor, and through it the store and the observers, is then
 * created when the first proxy is built rather than when the advisors are looked up,
 * which happens while bean post-processors are still being registered.
 * {@link #setAdvice(org.aopalliance.aop.Advice)} works too, eagerly.
 * <p>
 * Ordered at {@link #DEFAULT_ORDER} by default, ahead of advisors left at the lowest
 * precedence such as {@code @Transactional}, so that a call waiting for a permit does not
 * hold a transaction and a database connection meanwhile.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitedAdvisor extends AbstractBeanFactoryPointcutAdvisor {

	/** The default order: just ahead of advisors at the lowest precedence. */
	public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	private static final long serialVersionUID = 1L;

	private final RateLimitedPointcut pointcut;

	/**
	 * Creates an advisor.
	 * @param source the operations of each method
	 */
	public RateLimitedAdvisor(RateLimitedOperationSource source) {
		this.pointcut = new RateLimitedPointcut(Objects.requireNonNull(source, "'source' must not be null"));
		setOrder(DEFAULT_ORDER);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

}
