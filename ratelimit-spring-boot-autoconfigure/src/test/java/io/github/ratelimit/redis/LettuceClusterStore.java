package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.resolver.DefaultAddressResolverGroup;

import io.github.ratelimit.testsupport.redis.RedisCluster;
import io.github.ratelimit.testsupport.redis.RedisServer;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * A Redis store on a Lettuce cluster client of its own, for tests that stop a master: the
 * surviving masters serve their slots while one is down
 * ({@code cluster-require-full-coverage no}), and closing starts every stopped node again
 * and waits for the cluster to be healthy for the next test.
 */
final class LettuceClusterStore implements AutoCloseable {

	final RedisClusterClient client;

	final RedisRateLimitStore store;

	private final ClientResources resources;

	private final RedisServerExtension redis;

	private LettuceClusterStore(RedisServerExtension redis, Duration timeout, Duration reconnectDelay) {
		this.redis = redis;
		RedisCluster cluster = redis.redisCluster();
		cluster.awaitHealthy(Duration.ofSeconds(30));
		for (RedisServer node : cluster.nodes()) {
			node.command("CONFIG", "SET", "cluster-require-full-coverage", "no");
		}
		List<RedisURI> nodes = redis.nodes().stream().map((node) -> RedisURI.create("redis://" + node)).toList();
		ClientResources.Builder resources = ClientResources.builder()
			.addressResolverGroup(DefaultAddressResolverGroup.INSTANCE);
		if (!reconnectDelay.isZero()) {
			resources.reconnectDelay(Delay.constant(reconnectDelay));
		}
		this.resources = resources.build();
		this.client = RedisClusterClient.create(this.resources, nodes);
		this.store = RedisRateLimitStore.builder(this.client)
			.timeout(timeout)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
		this.store.start(Duration.ofSeconds(30));
	}

	static LettuceClusterStore start(RedisServerExtension redis, Duration timeout) {
		return new LettuceClusterStore(redis, timeout, Duration.ZERO);
	}

	/**
	 * A store whose client waits {@code reconnectDelay} before each attempt to reconnect
	 * a closed connection (Lettuce's own default starts at a few milliseconds), so that a
	 * closed connection stays closed long enough for calls to see it.
	 */
	static LettuceClusterStore start(RedisServerExtension redis, Duration timeout, Duration reconnectDelay) {
		return new LettuceClusterStore(redis, timeout, reconnectDelay);
	}

	@Override
	public void close() {
		this.store.close();
		this.client.shutdown();
		this.resources.shutdown();
		RedisCluster cluster = this.redis.redisCluster();
		for (RedisServer node : cluster.nodes()) {
			if (!node.isRunning()) {
				node.start();
			}
		}
		cluster.awaitHealthy(Duration.ofSeconds(30));
	}

}
