package io.github.ratelimit.redis;

import java.time.Duration;

import io.lettuce.core.cluster.RedisClusterClient;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * A Redis store on Jedis (the application's {@link JedisConnectionFactory}, which the
 * store copies) for tests that stop a Cluster master; set up, and closed, as
 * {@link LettuceClusterStore}, whose Lettuce client tells which master serves a slot.
 */
final class JedisClusterStore implements AutoCloseable {

	/** Tells which master serves a slot. */
	final RedisClusterClient partitions;

	final RedisRateLimitStore store;

	private final LettuceClusterStore cluster;

	private JedisClusterStore(RedisServerExtension redis, Duration timeout) {
		this.cluster = LettuceClusterStore.start(redis, timeout);
		this.partitions = this.cluster.client;
		JedisConnectionFactory application = new JedisConnectionFactory(new RedisClusterConfiguration(redis.nodes()));
		this.store = RedisRateLimitStore.builderFor(application)
			.timeout(timeout)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
		this.store.start(Duration.ofSeconds(30));
	}

	static JedisClusterStore start(RedisServerExtension redis, Duration timeout) {
		return new JedisClusterStore(redis, timeout);
	}

	@Override
	public void close() {
		this.store.close();
		this.cluster.close();
	}

}
