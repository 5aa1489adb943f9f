package io.github.ratelimit.redis;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * The whole contract suite against {@link RedisRateLimitStore} on a real 3-master Redis
 * Cluster through Jedis and Spring Data Redis: {@code SCRIPT LOAD} reaches every master,
 * and the hash tag keeps every key of a decision in one slot.
 */
class JedisRedisClusterRateLimitStoreTests extends RateLimitStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.cluster();

	/** The application's factory: the store copies its settings, it need not start. */
	private static JedisConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = new JedisConnectionFactory(new RedisClusterConfiguration(redis.nodes()));
	}

	@Override
	protected boolean sharesStoreAcrossTests() {
		return true;
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource time) {
		return ContractSuiteStores.onSuiteClock(RedisRateLimitStore.builderFor(connectionFactory), time);
	}

}
