package io.github.ratelimit.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.RateAndConcurrencyStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * The concurrency contract suite against {@link RedisRateLimitStore} through Jedis
 * (Spring Data Redis), not the Lettuce path.
 */
class JedisConcurrencyStoreTests extends RateAndConcurrencyStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static SharedConcurrencyStore shared;

	@BeforeAll
	static void connect() {
		JedisConnectionFactory factory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()),
				JedisClientConfiguration.builder().usePooling().build());
		shared = new SharedConcurrencyStore(() -> RedisRateLimitStore.builderFor(factory));
	}

	@AfterAll
	static void disconnect() {
		shared.close();
	}

	@Override
	protected ConcurrencyStore createStore(ManualTimeSource time) {
		return shared.on(time);
	}

}
