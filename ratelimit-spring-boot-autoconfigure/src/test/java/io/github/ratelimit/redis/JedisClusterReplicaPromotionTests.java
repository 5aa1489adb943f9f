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
 * {@link RedisClusterReplicaPromotionTests} on Jedis (Spring Data Redis's
 * {@link JedisConnectionFactory}): calls for a dead master's slots fail within the
 * timeout until its replica is promoted, and are decided by Redis again soon after. A
 * cluster of its own: a second failover on one cluster soon after the first was not
 * always made by Redis within half a minute.
 */
@Tag("cluster-faults")
class JedisClusterReplicaPromotionTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.clusterWithReplicas();

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
	void aDeadMastersSlotsFailWithinTheTimeoutAndAreOnRedisSoonAfterItsReplicaIsPromoted() {
		RedisClusterReplicaPromotionTests.promotion(redis, this.jedis.partitions, this.jedis.store, "Jedis");
	}

}
