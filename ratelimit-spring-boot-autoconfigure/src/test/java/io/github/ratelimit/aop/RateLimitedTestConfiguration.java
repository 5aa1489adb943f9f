package io.github.ratelimit.aop;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.type.AnnotationMetadata;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.spring.BucketRegistry;
import io.github.ratelimit.spring.NullKeyPolicy;
import io.github.ratelimit.spring.RateLimitExpressions;
import io.github.ratelimit.spring.RateLimitObserver;
import io.github.ratelimit.spring.RateLimitService;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Wires the interceptor the way the auto-configuration does: the operation source, the
 * validator, the advisor (infrastructure role, interceptor by bean name) and an
 * infrastructure auto-proxy creator with class proxies. The test supplies a
 * {@link BucketRegistry}, and either {@link ManualTimeConfiguration} or
 * {@link SystemTimeConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
@Import(RateLimitedTestConfiguration.AutoProxyRegistrar.class)
class RateLimitedTestConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitExpressions rateLimitExpressions(BeanFactory beanFactory) {
		return new RateLimitExpressions(beanFactory);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedOperationSource rateLimitedOperationSource(ObjectProvider<BucketRegistry> registry,
			RateLimitExpressions expressions) {
		return new RateLimitedOperationSource(registry::getObject, expressions);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedMethodValidator rateLimitedMethodValidator(RateLimitedOperationSource source) {
		return new RateLimitedMethodValidator(source);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedAdvisor rateLimitedAdvisor(RateLimitedOperationSource source) {
		RateLimitedAdvisor advisor = new RateLimitedAdvisor(source);
		advisor.setAdviceBeanName("rateLimitedInterceptor");
		return advisor;
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	RateLimitedInterceptor rateLimitedInterceptor(RateLimitedOperationSource source, RateLimitService service,
			ObjectProvider<NullKeyPolicy> nullKeyPolicy, TimeSource clock, PermitWaiter waiter) {
		return new RateLimitedInterceptor(source, service, nullKeyPolicy.getIfAvailable(() -> NullKeyPolicy.ERROR),
				clock, waiter);
	}

	@Bean
	RecordingObserver recordingObserver() {
		return new RecordingObserver();
	}

	@Bean
	RateLimitService rateLimitService(RateLimitStore store, ObjectProvider<RateLimitObserver> observers) {
		return new RateLimitService(store, observers.orderedStream().toList());
	}

	/**
	 * Registers Spring's infrastructure auto-proxy creator, which applies advisors with
	 * the infrastructure role, and makes it proxy classes (Spring Boot's default).
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
			AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
		}

	}

}
