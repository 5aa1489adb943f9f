package io.github.ratelimit.redis;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

/**
 * The contract suite against {@link RedisRateLimitStore} on a standalone Redis, with the
 * suite's clock passed to the script.
 */
class RedisRateLimitStoreTests extends RateLimitStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static RedisClient client;

	@BeforeAll
	static void connect() {
		client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
	}

	@AfterAll
	static void disconnect() {
		closeSharedStores();
		client.shutdown();
	}

	@Override
	protected boolean sharesStoreAcrossTests() {
		return true;
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource time) {
		// A generous timeout: this suite checks semantics, not latency, on a shared
		// machine. The suite's clock jumps ahead of real time: keys must outlive their
		// real-time TTL.
		return RedisRateLimitStore.builder(client)
			.timeSource(time)
			.expirySlack(Duration.ofMinutes(10))
			.timeout(Duration.ofSeconds(5))
			// Semantics, not latency: a loaded machine may take seconds to connect.
			.connectTimeout(Duration.ofSeconds(30))
			.build();
	}

}
