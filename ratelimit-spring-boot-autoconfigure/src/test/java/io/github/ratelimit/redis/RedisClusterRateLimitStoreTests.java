package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.netty.resolver.DefaultAddressResolverGroup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * The whole contract suite, multi-limit and concurrency cases included, against
 * {@link RedisRateLimitStore} on a real 3-master Redis Cluster: the hash tag keeps every
 * key of a decision in one slot, so no call fails with {@code CROSSSLOT}.
 */
class RedisClusterRateLimitStoreTests extends RateLimitStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.cluster();

	private static ClientResources resources;

	private static RedisClusterClient client;

	@BeforeAll
	static void connect() {
		List<RedisURI> nodes = redis.nodes().stream().map((node) -> RedisURI.create("redis://" + node)).toList();
		// The nodes are IP literals: the JDK's resolver, not Netty's DNS resolver, which
		// Lettuce picks when reactor-netty is on the class path (the WebFlux tests) and
		// whose start-up on a busy machine outlasts the first connect timeout.
		resources = ClientResources.builder().addressResolverGroup(DefaultAddressResolverGroup.INSTANCE).build();
		client = RedisClusterClient.create(resources, nodes);
	}

	@AfterAll
	static void disconnect() {
		closeSharedStores();
		client.shutdown();
		resources.shutdown();
	}

	@Override
	protected boolean sharesStoreAcrossTests() {
		return true;
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource time) {
		// The suite's clock jumps ahead of real time: keys must outlive their real-time
		// TTL. Generous timeouts: this suite checks semantics, not latency, and the first
		// connection to a cluster on a busy shared machine has taken over 5s.
		return RedisRateLimitStore.builder(client)
			.timeSource(time)
			.expirySlack(Duration.ofMinutes(10))
			.timeout(Duration.ofSeconds(5))
			// Semantics, not latency: a loaded machine may take seconds to connect.
			.connectTimeout(Duration.ofSeconds(30))
			.build();
	}

}
