package io.github.ratelimit.autoconfigure;

import java.util.Arrays;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

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

	private static final Log logger = LogFactory.getLog(MemoryStoreConfiguration.class);

	private static final String CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

	@Bean
	@Conditional(StoreCondition.Memory.class)
	InMemoryRateLimitStore rateLimitStore(RateLimitProperties properties, ListableBeanFactory beanFactory) {
		warnWhenRedisIsAmbiguous(properties, beanFactory);
		return InMemoryRateLimitStore.builder().maxKeys(properties.getMemory().getMaxKeys()).build();
	}

	/**
	 * With {@code ratelimit.store=auto}, several connection factories and none primary
	 * leave the store in memory: say so, since the application has Redis.
	 */
	private static void warnWhenRedisIsAmbiguous(RateLimitProperties properties, ListableBeanFactory beanFactory) {
		ClassLoader classLoader = MemoryStoreConfiguration.class.getClassLoader();
		if (properties.getStore() != RateLimitProperties.StoreType.AUTO
				|| !ClassUtils.isPresent(CONNECTION_FACTORY, classLoader)) {
			return;
		}
		String[] factories = beanFactory
			.getBeanNamesForType(ClassUtils.resolveClassName(CONNECTION_FACTORY, classLoader));
		if (factories.length > 1) {
			logger.warn("Rate limit store: in memory, not Redis: there are " + factories.length
					+ " RedisConnectionFactory beans " + Arrays.toString(factories)
					+ " and ratelimit.store=auto cannot tell which to use, so each instance enforces its limits alone. "
					+ "Mark the one for rate limits @Primary, or set ratelimit.store=memory to keep them in memory.");
		}
	}

}
