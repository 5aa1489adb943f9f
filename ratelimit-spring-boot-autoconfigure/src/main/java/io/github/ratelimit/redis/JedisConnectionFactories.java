package io.github.ratelimit.redis;

import java.time.Duration;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
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

	/** See {@link #withAttempts(RedisClusterConfiguration)}. */
	static final int CLUSTER_ATTEMPTS = 2;

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
		JedisConnectionFactory copy = withServersOf(application, configuration);
		copy.setUseUnifiedJedis(application.isUseUnifiedJedis());
		return copy;
	}

	/** A factory on the application's servers: cluster, Sentinel or standalone. */
	private static JedisConnectionFactory withServersOf(JedisConnectionFactory application,
			JedisClientConfiguration configuration) {
		RedisClusterConfiguration cluster = application.getClusterConfiguration();
		if (application.isRedisClusterAware() && cluster != null) {
			return new JedisConnectionFactory(withAttempts(cluster), configuration);
		}
		RedisSentinelConfiguration sentinel = application.getSentinelConfiguration();
		if (application.isRedisSentinelAware() && sentinel != null) {
			return new JedisConnectionFactory(sentinel, configuration);
		}
		RedisStandaloneConfiguration standalone = application.getStandaloneConfiguration();
		if (standalone == null) {
			throw new IllegalStateException("The application's JedisConnectionFactory names no Redis server");
		}
		return new JedisConnectionFactory(standalone, configuration);
	}

	/**
	 * The application's cluster settings with at most {@value #CLUSTER_ATTEMPTS} attempts
	 * per call: Jedis tries a call that fails to connect again, with back-off, up to its
	 * attempts (the cluster's {@code max-redirects}, 5 by default) for as long as the
	 * read timeout times the attempts, which kept a call for a dead master's slots
	 * waiting 0.6 s on a 200 ms timeout. Two attempts still follow one {@code MOVED} or
	 * {@code ASK} (the slot cache is read again after the first), which is all a failover
	 * or a slot migration needs; a call that fails is answered by the failure mode.
	 */
	private static RedisClusterConfiguration withAttempts(RedisClusterConfiguration application) {
		RedisClusterConfiguration copy = new RedisClusterConfiguration();
		copy.setClusterNodes(application.getClusterNodes());
		copy.setUsername(application.getUsername());
		copy.setPassword(application.getPassword());
		Integer redirects = application.getMaxRedirects();
		copy.setMaxRedirects((redirects != null) ? Math.min(redirects, CLUSTER_ATTEMPTS) : CLUSTER_ATTEMPTS);
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
