package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.autoconfigure.RateLimitProperties.TimeSourceType;
import io.github.ratelimit.autoconfigure.RateLimitStartupSummary.StoreTarget;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.bucket.LiveLimits;
import io.github.ratelimit.bucket.LiveLimitsStore;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.failover.BreakerSettings;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.LettuceMasterReplica;
import io.github.ratelimit.redis.RedisLiveLimitsStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The Redis store, on the application's {@link RedisConnectionFactory} (Lettuce, Spring
 * Boot's default client, or any other such as Jedis), behind a circuit breaker that
 * applies {@code ratelimit.failure-mode} while Redis fails. Creating the store does no
 * I/O: the {@link RedisStoreLifecycle} connects, loads the script and warms the store up
 * when the context starts, before the web server takes requests.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.data.redis.connection.RedisConnectionFactory")
@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
@Conditional(StoreCondition.Redis.class)
class RedisStoreConfiguration {

	private static final Log logger = LogFactory.getLog(RedisStoreConfiguration.class);

	private static final String LETTUCE_FACTORY = "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory";

	private static final String JEDIS_FACTORY = "org.springframework.data.redis.connection.jedis.JedisConnectionFactory";

	@Bean
	@ConditionalOnMissingBean(RateLimitStore.class)
	FailoverRateLimitStore rateLimitStore(RedisConnectionFactory redisConnectionFactory,
			RateLimitProperties properties) {
		RateLimitProperties.Redis redis = properties.getRedis();
		logger.info("Rate limit store: Redis " + clientPath(redisConnectionFactory));
		RedisRateLimitStore store = RedisRateLimitStore.builderFor(redisConnectionFactory)
			.keyPrefix(properties.getKeyPrefix())
			.timeout(redis.getTimeout())
			.connectTimeout(redis.getConnectTimeout())
			.timeSource((redis.getTimeSource() == TimeSourceType.LOCAL) ? TimeSource.system() : null)
			.coalescing(redis.getCoalescing().isEnabled())
			.required(properties.getStore() == RateLimitProperties.StoreType.REDIS)
			.whileUnavailable(whileUnavailable(properties.getFailureMode()))
			.build();
		InMemoryRateLimitStore fallback = InMemoryRateLimitStore.builder()
			.maxKeys(properties.getMemory().getMaxKeys())
			.build();
		RateLimitProperties.Fallback fallbackSettings = properties.getFallback();
		FailoverRateLimitStore.Builder failover = FailoverRateLimitStore.builder(store, fallback)
			.failureMode(properties.getFailureMode())
			.breaker(breaker(properties.getBreaker()))
			.rememberedKeys(fallbackSettings.getRememberedKeys())
			.rejectionCache(rejectionCache(redis.getLocalRejections()))
			.primaryConnected(store::isConnected);
		Integer instances = fallbackSettings.getInstances();
		if (instances != null) {
			failover.instances(instances);
		}
		return failover.build();
	}

	/**
	 * What decisions do while Redis cannot be used, for the WARN of a start without it.
	 */
	private static String whileUnavailable(FailureMode mode) {
		return switch (mode) {
			case FALLBACK -> "limits are per instance now (ratelimit.failure-mode=fallback): each instance "
					+ "enforces its share of every limit in memory until Redis answers";
			case OPEN -> "rate limited requests are all allowed now (ratelimit.failure-mode=open) until Redis answers";
			case CLOSED ->
				"rate limited requests are all refused now (ratelimit.failure-mode=closed) until Redis " + "answers";
		};
	}

	private static @Nullable RejectionCache rejectionCache(RateLimitProperties.LocalRejections local) {
		if (!local.isEnabled()) {
			return null;
		}
		return new RejectionCache(local.getMaxKeys(), local.getMaxAge());
	}

	/**
	 * Says which of the store's two ways to Redis the factory gets, for the startup log.
	 */
	private static String clientPath(RedisConnectionFactory factory) {
		String type = factory.getClass().getName();
		if (isLettuce(factory)) {
			return "through Lettuce (" + type + "): EVALSHA on a connection of the store's own (concurrency "
					+ "limits' permits on one Redis over a second), timed on the connection's I/O thread";
		}
		return "through Spring Data Redis (" + type + "): EVALSHA on the caller's thread, "
				+ "asynchronous calls on the store's bounded thread pool";
	}

	private static boolean isLettuce(RedisConnectionFactory factory) {
		return isA(factory, "io.lettuce.core.RedisClient", LETTUCE_FACTORY);
	}

	private static boolean isJedis(RedisConnectionFactory factory) {
		return isA(factory, "redis.clients.jedis.Jedis", JEDIS_FACTORY);
	}

	/**
	 * Whether the factory is of the named class, checked without loading that class when
	 * its client library is absent.
	 */
	private static boolean isA(RedisConnectionFactory factory, String clientClass, String factoryClass) {
		ClassLoader classLoader = factory.getClass().getClassLoader();
		return ClassUtils.isPresent(clientClass, classLoader)
				&& ClassUtils.resolveClassName(factoryClass, classLoader).isInstance(factory);
	}

	/**
	 * Where the store points, for the startup summary; the summary shows it only when the
	 * store is this configuration's.
	 */
	@Bean
	@ConditionalOnMissingBean
	StoreTarget rateLimitRedisStoreTarget(RedisConnectionFactory redisConnectionFactory) {
		if (isLettuce(redisConnectionFactory)) {
			return LettuceTarget.of(redisConnectionFactory);
		}
		if (isJedis(redisConnectionFactory)) {
			return JedisTarget.of(redisConnectionFactory);
		}
		return new StoreTarget("redis");
	}

	@Bean
	@ConditionalOnMissingBean
	RedisStoreLifecycle rateLimitRedisStoreLifecycle(ObjectProvider<RateLimitStore> rateLimitStore) {
		return new RedisStoreLifecycle(rateLimitStore);
	}

	/**
	 * Live limit changes in Redis, namespaced by the key prefix: every instance on the
	 * same Redis and prefix shares them.
	 */
	@Bean
	@ConditionalOnMissingBean(LiveLimitsStore.class)
	RedisLiveLimitsStore rateLimitLiveLimitsStore(RedisConnectionFactory redisConnectionFactory,
			RateLimitProperties properties) {
		return new RedisLiveLimitsStore(redisConnectionFactory, properties.getKeyPrefix());
	}

	@Bean
	@ConditionalOnMissingBean
	RedisHeartbeat rateLimitRedisHeartbeat(ObjectProvider<RateLimitStore> rateLimitStore,
			LiveLimits rateLimitLiveLimits, RateLimitProperties properties,
			ObjectProvider<RedisEvictionPolicy> rateLimitRedisEvictionPolicy,
			ObjectProvider<ConcurrencyLimiters> concurrencyLimiters) {
		RateLimitProperties.Redis redis = properties.getRedis();
		return new RedisHeartbeat(rateLimitStore, rateLimitLiveLimits, heartbeatInterval(redis),
				redis.getConnectTimeout(), rateLimitRedisEvictionPolicy.getIfUnique(), () -> concurrencyLimiters
					.ifAvailable((limiters) -> limiters.all().values().forEach(ConcurrencyLimiter::storeAnswersAgain)));
	}

	/**
	 * Redis's {@code maxmemory-policy}, read by the heartbeat when Redis answers, for the
	 * log, the health indicator and the startup summary.
	 */
	@Bean
	@ConditionalOnMissingBean
	RedisEvictionPolicy rateLimitRedisEvictionPolicy(RedisConnectionFactory redisConnectionFactory) {
		return new RedisEvictionPolicy(redisConnectionFactory);
	}

	/**
	 * The heartbeat's interval: {@code heartbeat-interval}, or the deprecated
	 * {@code live-limits-poll-interval} when that one is set.
	 */
	@SuppressWarnings("deprecation")
	private static Duration heartbeatInterval(RateLimitProperties.Redis redis) {
		Duration poll = redis.getLiveLimitsPollInterval();
		if (poll != null) {
			return poll;
		}
		return redis.getHeartbeatInterval();
	}

	/**
	 * The breaker's settings, checked when the properties were bound.
	 */
	private static BreakerSettings breaker(RateLimitProperties.Breaker breaker) {
		return new BreakerSettings(breaker.getWindow(), breaker.getFailureRateThreshold(), breaker.getWaitInOpenState(),
				breaker.getProbes());
	}

	/**
	 * Reads a Lettuce factory's servers; a class of its own, loaded only for a Lettuce
	 * factory, so that an application on Jedis alone never needs Lettuce's classes.
	 */
	private static final class LettuceTarget {

		static StoreTarget of(RedisConnectionFactory redisConnectionFactory) {
			LettuceConnectionFactory factory = (LettuceConnectionFactory) redisConnectionFactory;
			RedisStaticMasterReplicaConfiguration masterReplica = LettuceMasterReplica.configurationOf(factory);
			if (masterReplica != null) {
				// The script goes to whichever node is the master, found at connect time.
				return new StoreTarget((factory.isUseSsl() ? "rediss" : "redis") + "-masterreplica://"
						+ String.join(",", LettuceMasterReplica.nodes(masterReplica))
						+ ((masterReplica.getDatabase() != 0) ? "/" + masterReplica.getDatabase() : "")
						+ " (static master/replica: the script runs on the master)");
			}
			return target(factory.isUseSsl(), factory.getClusterConfiguration(), factory.getSentinelConfiguration(),
					factory.getHostName(), factory.getPort(), factory.getDatabase());
		}

	}

	/**
	 * Reads a Jedis factory's servers; loaded only for a Jedis factory, as
	 * {@link LettuceTarget} is for Lettuce.
	 */
	private static final class JedisTarget {

		static StoreTarget of(RedisConnectionFactory redisConnectionFactory) {
			JedisConnectionFactory factory = (JedisConnectionFactory) redisConnectionFactory;
			return target(factory.isUseSsl(), factory.getClusterConfiguration(), factory.getSentinelConfiguration(),
					factory.getHostName(), factory.getPort(), factory.getDatabase());
		}

	}

	private static StoreTarget target(boolean ssl, @Nullable RedisClusterConfiguration cluster,
			@Nullable RedisSentinelConfiguration sentinel, String host, int port, int database) {
		String scheme = ssl ? "rediss" : "redis";
		if (cluster != null) {
			return new StoreTarget(scheme + "-cluster://" + nodes(cluster.getClusterNodes()));
		}
		if (sentinel != null) {
			return new StoreTarget(scheme + "-sentinel://" + nodes(sentinel.getSentinels()) + " (master "
					+ ((sentinel.getMaster() != null) ? sentinel.getMaster().getName() : "?") + ")");
		}
		return new StoreTarget(scheme + "://" + host + ":" + port + ((database != 0) ? "/" + database : ""));
	}

	private static String nodes(Iterable<RedisNode> nodes) {
		List<String> names = new ArrayList<>();
		nodes.forEach((node) -> names.add(node.getHost() + ":" + node.getPort()));
		return String.join(",", names);
	}

}
