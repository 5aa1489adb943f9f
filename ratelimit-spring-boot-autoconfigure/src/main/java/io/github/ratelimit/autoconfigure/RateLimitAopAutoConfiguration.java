package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.aop.ConcurrencyLimitedAdvisor;
import io.github.ratelimit.aop.ConcurrencyLimitedInterceptor;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.aop.RateLimitedAdvisor;
import io.github.ratelimit.aop.RateLimitedInterceptor;
import io.github.ratelimit.aop.operation.RateLimitedMethodValidator;
import io.github.ratelimit.aop.operation.RateLimitedOperationSource;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.expression.RateLimitExpressions;

/**
 * {@code @RateLimited} on Spring beans: an advisor applied by Spring's auto-proxy creator
 * (no AspectJ weaver needed), and a post-processor that parses and validates every
 * annotation when its bean is created, so a bad expression fails startup. The interceptor
 * takes its permits through the {@link Acquirer} bean, whose {@code Waiter} decides the
 * clock, how calls wait and where asynchronous calls continue.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		afterName = "org.springframework.boot.autoconfigure.aop.AopAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.aop.support.AbstractBeanFactoryPointcutAdvisor")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@Import(RateLimitAopAutoConfiguration.AutoProxyRegistrar.class)
public final class RateLimitAopAutoConfiguration {

	// Infrastructure beans are static: post-processors are created before other beans,
	// and must not pull the store, the acquirer or the meter registry in early.

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedOperationSource rateLimitedOperationSource(ObjectProvider<BucketRegistry> registry,
			RateLimitExpressions expressions) {
		return new RateLimitedOperationSource(registry::getObject, expressions);
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedMethodValidator rateLimitedMethodValidator(RateLimitedOperationSource source) {
		return new RateLimitedMethodValidator(source);
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedAdvisor rateLimitedAdvisor(RateLimitedOperationSource source) {
		RateLimitedAdvisor advisor = new RateLimitedAdvisor(source);
		advisor.setAdviceBeanName("rateLimitedInterceptor");
		return advisor;
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	RateLimitedInterceptor rateLimitedInterceptor(RateLimitedOperationSource source, Acquirer rateLimitAcquirer,
			RateLimitProperties properties, ClientIpResolver clientIps) {
		return new RateLimitedInterceptor(source, rateLimitAcquirer, properties.getNullKey(), clientIps);
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static ConcurrencyLimitedAdvisor concurrencyLimitedAdvisor() {
		ConcurrencyLimitedAdvisor advisor = new ConcurrencyLimitedAdvisor();
		advisor.setAdviceBeanName("concurrencyLimitedInterceptor");
		return advisor;
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	ConcurrencyLimitedInterceptor concurrencyLimitedInterceptor(ConcurrencyLimiters concurrencyLimiters,
			RateLimitExpressions expressions, ObjectProvider<ConcurrencyLimitedAdvisor> advisor,
			RateLimitedOperationSource rateLimits) {
		return new ConcurrencyLimitedInterceptor(concurrencyLimiters, expressions, () -> {
			ConcurrencyLimitedAdvisor methods = advisor.getIfAvailable();
			return (methods != null) ? methods.matchedMethods() : List.of();
		}, rateLimits);
	}

	/**
	 * Makes sure an auto-proxy creator exists (Spring Boot's {@code AopAutoConfiguration}
	 * registers one unless {@code spring.aop.auto=false}), proxying classes unless
	 * {@code spring.aop.proxy-target-class=false}.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

		private boolean proxyTargetClass = true;

		@Override
		public void setEnvironment(Environment environment) {
			this.proxyTargetClass = environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true);
		}

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
			if (this.proxyTargetClass) {
				AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
			}
		}

	}

}
