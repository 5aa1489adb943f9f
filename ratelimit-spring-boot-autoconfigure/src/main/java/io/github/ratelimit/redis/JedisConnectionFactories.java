package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.Objects;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration.JedisClientConfigurationBuilder;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration.JedisSslClientConfigurationBuilder;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

/**
 * Makes the Redis store's own {@link JedisConnectionFactory} from the application's: the
 * same servers (standalone, Sentinel or Cluster), credentials, database, SSL, client name
 * and pool sizes, with the store's timeouts. A blocking client can only time a call out
 * with its socket timeouts, which the application's factory sets for the application's
 * own commands.
 */
final class JedisConnectionFactories {

	private JedisConnectionFactories() {
	}

	/**
	 * Returns a new factory, not yet started, like {@code application} but with
	 * {@code readTimeout} as the socket read timeout, and {@code connectTimeout} as the
	 * connect timeout and the longest wait for a pooled connection.
	 * @param application the application's factory
	 * @param connectTimeout the store's connect timeout
	 * @param readTimeout the store's command timeout
	 * @return the factory
	 */
	static JedisConnectionFactory copy(JedisConnectionFactory application, Duration connectTimeout,
			Duration readTimeout) {
		JedisClientConfiguration settings = application.getClientConfiguration();
		JedisClientConfigurationBuilder builder = JedisClientConfiguration.builder();
		settings.getClientName().ifPresent(builder::clientName);
		settings.getClientConfigCustomizer().ifPresent(builder::customizeClientConfig);
		settings.getClientCustomizer().ifPresent(builder::customizeClient);
		if (settings.isUseSsl()) {
			JedisSslClientConfigurationBuilder ssl = builder.useSsl();
			settings.getSslSocketFactory().ifPresent(ssl::sslSocketFactory);
			settings.getSslParameters().ifPresent(ssl::sslParameters);
			settings.getHostnameVerifier().ifPresent(ssl::hostnameVerifier);
		}
		builder.usePooling().poolConfig(pool(application, connectTimeout));
		JedisClientConfiguration configuration = builder.connectTimeout(connectTimeout)
			.readTimeout(readTimeout)
			.build();
		JedisConnectionFactory copy;
		if (application.isRedisClusterAware()) {
			copy = new JedisConnectionFactory(Objects.requireNonNull(application.getClusterConfiguration()),
					configuration);
		}
		else if (application.isRedisSentinelAware()) {
			copy = new JedisConnectionFactory(Objects.requireNonNull(application.getSentinelConfiguration()),
					configuration);
		}
		else {
			copy = new JedisConnectionFactory(Objects.requireNonNull(application.getStandaloneConfiguration()),
					configuration);
		}
		copy.setUseUnifiedJedis(application.isUseUnifiedJedis());
		return copy;
	}

	/**
	 * Returns the most connections the store's pool opens to one server.
	 * @param application the application's factory
	 * @param unbounded what to return when the pool has no bound
	 * @return the pool's largest size
	 */
	static int maxConnections(JedisConnectionFactory application, int unbounded) {
		int max = pool(application, Duration.ZERO).getMaxTotal();
		return (max > 0) ? max : unbounded;
	}

	/**
	 * The application's pool settings (Jedis's defaults when it does not pool), with no
	 * wait for a connection longer than {@code maxWait}.
	 */
	private static GenericObjectPoolConfig<?> pool(JedisConnectionFactory application, Duration maxWait) {
		GenericObjectPoolConfig<?> pool = application.getClientConfiguration()
			.getPoolConfig()
			.map(GenericObjectPoolConfig::clone)
			.orElseGet(GenericObjectPoolConfig::new);
		if (pool.getMaxWaitDuration().isNegative() || pool.getMaxWaitDuration().compareTo(maxWait) > 0) {
			pool.setMaxWait(maxWait);
		}
		return pool;
	}

}
