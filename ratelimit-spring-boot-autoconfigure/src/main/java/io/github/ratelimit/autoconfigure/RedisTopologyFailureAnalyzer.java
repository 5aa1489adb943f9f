package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Explains a Redis deployment the application's client cannot connect to, so the rate
 * limit store cannot decide on it: static master/replica nodes
 * ({@code spring.data.redis.masterreplica.nodes}) on Jedis, which Spring Boot refuses
 * with a bare {@code 'masterReplicaConfig' is not supported by Jedis}. The analysis names
 * the property and the deployments that work.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class RedisTopologyFailureAnalyzer extends AbstractFailureAnalyzer<IllegalStateException> {

	static final String PROPERTY = "spring.data.redis.masterreplica.nodes";

	static final String SUPPORTED = "The rate limit store supports: a standalone server (spring.data.redis.host "
			+ "and spring.data.redis.port, or spring.data.redis.url), Sentinel (spring.data.redis.sentinel.master and "
			+ "spring.data.redis.sentinel.nodes) and Cluster (spring.data.redis.cluster.nodes) on Lettuce or Jedis, "
			+ "and static master/replica (" + PROPERTY + ") on Lettuce only.";

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, IllegalStateException cause) {
		String message = cause.getMessage();
		if (message == null || !message.contains("masterReplicaConfig") || !message.contains("Jedis")) {
			return null;
		}
		return new FailureAnalysis(PROPERTY + " is set, but the application's Redis client is Jedis, which Spring "
				+ "Data Redis cannot connect to static master/replica nodes: neither the application nor the rate "
				+ "limit store can use Redis (Spring Boot: " + message + ").",
				"Use Lettuce (Spring Boot's default client: keep io.lettuce:lettuce-core on the class path, or set "
						+ "spring.data.redis.client-type=lettuce); the rate limit store then sends its script to the "
						+ "master. Or, to stay on Jedis, remove " + PROPERTY + " and configure a deployment Jedis "
						+ "supports. " + SUPPORTED,
				cause);
	}

}
