package io.github.ratelimit.redis;

import java.util.List;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.netty.resolver.DefaultAddressResolverGroup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.RateAndConcurrencyStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * The concurrency contract suite against {@link RedisRateLimitStore} on a real 3-master
 * Redis Cluster: each key's permits are one key, in the slot of its hash tag.
 */
class RedisClusterConcurrencyStoreTests extends RateAndConcurrencyStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.cluster();

	private static ClientResources resources;

	private static RedisClusterClient client;

	private static SharedConcurrencyStore shared;

	@BeforeAll
	static void connect() {
		List<RedisURI> nodes = redis.nodes().stream().map((node) -> RedisURI.create("redis://" + node)).toList();
		resources = ClientResources.builder().addressResolverGroup(DefaultAddressResolverGroup.INSTANCE).build();
		client = RedisClusterClient.create(resources, nodes);
		shared = new SharedConcurrencyStore(() -> RedisRateLimitStore.builder(client));
	}

	@AfterAll
	static void disconnect() {
		shared.close();
		client.shutdown();
		resources.shutdown();
	}

	@Override
	protected ConcurrencyStore createStore(ManualTimeSource time) {
		return shared.on(time);
	}

}
