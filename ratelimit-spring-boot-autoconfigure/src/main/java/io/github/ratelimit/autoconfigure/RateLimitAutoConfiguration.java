package io.github.ratelimit.autoconfigure;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;

import io.github.ratelimit.spring.BucketRegistry;
import io.github.ratelimit.spring.RateLimitExpressions;
import io.github.ratelimit.spring.RateLimitObserver;
import io.github.ratelimit.spring.RateLimitService;
import io.github.ratelimit.spring.RateLimitStatistics;
import io.github.ratelimit.status.StoreStatus;
import io.github.ratelimit.status.StoreStatusSource;
import io.github.ratelimit.spring.RateLimiters;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Rate limiting: the store (Redis or in-memory, by {@code ratelimit.store}), the bucket
 * registry and the service every integration decides through. Needs nothing but this
 * library: Redis, the web stack, AOP, actuator and Micrometer each add their part when
 * present.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RedisStoreConfiguration.class, MemoryStoreConfiguration.class })
public final class RateLimitAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	BucketRegistry rateLimitBucketRegistry(RateLimitProperties properties) {
		RateLimitPropertiesValidator.validate(properties);
		BucketRegistry registry = new BucketRegistry(RateLimitSettingsMapper.limit(properties.getDefaults()),
				RateLimitSettingsMapper.buckets(properties.getBuckets()));
		registry.validateConfiguration();
		return registry;
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitExpressions rateLimitExpressions(BeanFactory beanFactory) {
		return new RateLimitExpressions(beanFactory);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitService rateLimitService(RateLimitStore rateLimitStore, ObjectProvider<RateLimitObserver> observers) {
		return new RateLimitService(rateLimitStore, observers.orderedStream().toList());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitStatistics rateLimitStatistics() {
		return new RateLimitStatistics();
	}

	@Bean
	@ConditionalOnMissingBean
	StoreStatusSource rateLimitStoreStatus(RateLimitStore rateLimitStore, RateLimitProperties properties) {
		if (rateLimitStore instanceof StoreStatusSource source) {
			return source;
		}
		StoreStatus status = new StoreStatus(rateLimitStore.name(), properties.getFailureMode(), false, 0);
		return () -> status;
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiters rateLimiters(BucketRegistry registry, RateLimitStore rateLimitStore) {
		return new RateLimiters(registry, rateLimitStore);
	}

}
