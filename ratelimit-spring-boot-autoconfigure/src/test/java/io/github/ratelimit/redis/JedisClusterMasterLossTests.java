package io.github.ratelimit.redis;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Tag;

import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * {@link RedisClusterMasterLossTests} on Jedis (Spring Data Redis's
 * {@link JedisConnectionFactory}): on a real 3-master Redis Cluster without replicas,
 * calls for a dead master's slots fail fast as a partial outage naming it (the breaker
 * stays closed for the other masters' keys, which Redis still decides), and its slots are
 * decided by Redis again once it is back. Measured figures are printed.
 */
@Tag("cluster-faults")
class JedisClusterMasterLossTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.cluster();

	private static final Duration TIMEOUT = Duration.ofMillis(200);

	private JedisClusterStore jedis;

	@BeforeEach
	void connect() {
		this.jedis = JedisClusterStore.start(redis, TIMEOUT);
	}

	@AfterEach
	void disconnect() {
		this.jedis.close();
	}

	@Test
	void throughTheFailoverStoreADeadMastersKeysUseTheFallbackAndTheOthersStayOnRedis() {
		RedisClusterMasterLossTests.throughTheFailoverStore(redis, this.jedis.partitions, this.jedis.store, "Jedis");
	}

	@Test
	void callsForADeadMastersSlotsFailFastAndComeBackWhenItRestarts() {
		RedisClusterMasterLossTests.callsFailFastAndComeBack(redis, this.jedis.partitions, this.jedis.store, "Jedis");
	}

}
