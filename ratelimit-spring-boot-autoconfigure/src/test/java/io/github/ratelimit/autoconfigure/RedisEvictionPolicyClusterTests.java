package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.testsupport.redis.RedisServer;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisEvictionPolicy} on a real Redis Cluster: every master answers, and one
 * master that may evict is enough for the warning.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisEvictionPolicyClusterTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.cluster();

	@Test
	void everyMasterIsReadAndOneThatEvictsIsNamed(CapturedOutput output) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(redis.nodes()));
		factory.afterPropertiesSet();
		factory.start();
		RedisServer node = redis.redisCluster().nodes().get(0);
		try {
			RedisEvictionPolicy policy = new RedisEvictionPolicy(factory);
			policy.check();
			assertThat(policy.policy()).isEqualTo("noeviction");
			node.command("CONFIG", "SET", "maxmemory-policy", "volatile-lru");
			policy.check();
			assertThat(policy.policy()).isEqualTo("noeviction,volatile-lru");
			assertThat(output).contains("Redis's maxmemory-policy is noeviction,volatile-lru: when Redis reaches "
					+ "maxmemory it evicts limit keys");
		}
		finally {
			node.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
			factory.destroy();
		}
	}

}
