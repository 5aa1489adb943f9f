package io.github.ratelimit.benchmarks.app;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import com.giffing.bucket4j.spring.boot.starter.config.cache.AbstractCacheResolverTemplate;
import com.giffing.bucket4j.spring.boot.starter.config.cache.SyncCacheResolver;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AbstractProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * What bucket4j-spring-boot-starter needs for its servlet filter on Redis through
 * Lettuce: its own {@link RedisClient} and a {@link SyncCacheResolver} (the starter's
 * Lettuce resolver is asynchronous, for WebFlux only). The resolver builds the proxy
 * manager the starter's own Lettuce resolver builds: compare-and-swap, keys expiring 10
 * seconds after the bucket would be full again.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@Configuration(proxyBeanMethods = false)
@Profile("bucket4j")
public class Bucket4jLettuceConfiguration {

	@Bean(destroyMethod = "shutdown")
	RedisClient bucket4jRedisClient(@Value("${spring.data.redis.host}") String host,
			@Value("${spring.data.redis.port}") int port) {
		return RedisClient.create(RedisURI.create(host, port));
	}

	@Bean
	SyncCacheResolver bucket4jCacheResolver(RedisClient bucket4jRedisClient) {
		return new LettuceSyncCacheResolver(bucket4jRedisClient);
	}

	/**
	 * The starter's Lettuce cache resolver, synchronous.
	 */
	static final class LettuceSyncCacheResolver extends AbstractCacheResolverTemplate<byte[]>
			implements SyncCacheResolver {

		private final AbstractProxyManager<byte[]> proxyManager;

		LettuceSyncCacheResolver(RedisClient client) {
			this.proxyManager = Bucket4jLettuce.casBasedBuilder(client)
				.expirationAfterWrite(
						ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
				.build();
		}

		@Override
		public boolean isAsync() {
			return false;
		}

		@Override
		public AbstractProxyManager<byte[]> getProxyManager(String cacheName) {
			return this.proxyManager;
		}

		@Override
		public byte[] castStringToCacheKey(String key) {
			return key.getBytes(StandardCharsets.UTF_8);
		}

	}

}
