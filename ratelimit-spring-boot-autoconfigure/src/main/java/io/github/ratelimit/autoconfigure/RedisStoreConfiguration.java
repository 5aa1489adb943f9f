package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.autoconfigure.RateLimitProperties.TimeSourceType;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The Redis store, on the application's {@link RedisConnectionFactory} (which must be
 * Lettuce, Spring Boot's default client), behind a circuit breaker that applies
 * {@code ratelimit.failure-mode} while Redis fails.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = { "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
		"io.lettuce.core.RedisClient" })
@ConditionalOnBean(RedisConnectionFactory.class)
@Conditional(StoreCondition.Redis.class)
class RedisStoreConfiguration {

	/** How long startup waits for Redis to load the script before going on without it. */
	private static final Duration STARTUP_WAIT = Duration.ofSeconds(2);

	@Bean
	@ConditionalOnMissingBean(RateLimitStore.class)
	FailoverRateLimitStore rateLimitStore(RedisConnectionFactory redisConnectionFactory,
			RateLimitProperties properties) {
		if (!(redisConnectionFactory instanceof LettuceConnectionFactory lettuce)) {
			throw new InvalidConfigurationPropertyValueException("ratelimit.store", properties.getStore(),
					"the Redis rate limit store needs Lettuce (Spring Boot's default Redis client) but the "
							+ "RedisConnectionFactory is a " + redisConnectionFactory.getClass().getName()
							+ "; use Lettuce, or set ratelimit.store=memory");
		}
		if (lettuce.getNativeClient() == null) {
			lettuce.start();
		}
		RateLimitProperties.Redis redis = properties.getRedis();
		RedisRateLimitStore store = RedisRateLimitStore.builder(lettuce)
			.keyPrefix(properties.getKeyPrefix())
			.timeout(redis.getTimeout())
			.timeSource((redis.getTimeSource() == TimeSourceType.LOCAL) ? TimeSource.system() : null)
			.build();
		store.start(STARTUP_WAIT);
		InMemoryRateLimitStore fallback = InMemoryRateLimitStore.builder()
			.maxKeys(properties.getMemory().getMaxKeys())
			.build();
		return new FailoverRateLimitStore(store, fallback, properties.getFailureMode());
	}

}
