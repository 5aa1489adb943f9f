package io.github.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The in-memory store, when {@code ratelimit.store} is {@code memory}, or {@code auto}
 * with no Redis; and a clear failure when {@code redis} is asked for but there is no
 * Redis.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnMissingBean(RateLimitStore.class)
class MemoryStoreConfiguration {

	@Bean
	@Conditional(StoreCondition.Memory.class)
	InMemoryRateLimitStore rateLimitStore(RateLimitProperties properties) {
		return InMemoryRateLimitStore.builder().maxKeys(properties.getMemory().getMaxKeys()).build();
	}

	@Bean
	@Conditional(RequiredRedisMissingCondition.class)
	RateLimitStore rateLimitStoreWithoutRedis() {
		throw new InvalidConfigurationPropertyValueException("ratelimit.store", "redis",
				"there is no RedisConnectionFactory bean: add spring-boot-starter-data-redis and set "
						+ "spring.data.redis.host/port, or set ratelimit.store=memory");
	}

}
