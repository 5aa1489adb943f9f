package io.github.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The in-memory store, when {@code ratelimit.store} is {@code memory}, or {@code auto}
 * with no Redis. With {@code redis} and no Redis store there is no store at all, and
 * {@link RedisStoreMissingFailureAnalyzer} says why.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnMissingBean(RateLimitStore.class)
class MemoryStoreConfiguration {

	@Bean
	@Conditional(StoreCondition.Memory.class)
	InMemoryRateLimitStore rateLimitStore(RateLimitProperties properties) {
		return InMemoryRateLimitStore.builder().maxKeys(properties.getMemory().getMaxKeys()).build();
	}

}
