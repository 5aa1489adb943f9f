package io.github.ratelimit.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.ConcurrencyStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The concurrency contract suite against {@link RedisRateLimitStore} on a standalone
 * Redis, with the suite's clock passed to the script.
 */
class RedisConcurrencyStoreTests extends ConcurrencyStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static RedisClient client;

	private static SharedConcurrencyStore shared;

	@BeforeAll
	static void connect() {
		client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		shared = new SharedConcurrencyStore(() -> RedisRateLimitStore.builder(client));
	}

	@AfterAll
	static void disconnect() {
		shared.close();
		client.shutdown();
	}

	@Override
	protected ConcurrencyStore createStore(ManualTimeSource time) {
		return shared.on(time);
	}

	@Test
	void thePermitsOfAKeyAreOneSortedSetInItsSlotThatExpiresWithItsLatestLease() {
		ConcurrencyStore store = shared.on(this.time);
		store.acquire("slots", "k", THREE, "h1");
		assertThat(redis.server().command("TYPE", "rl:{slots:k}:cc")).contains("zset");
		assertThat(redis.server().command("ZRANGE", "rl:{slots:k}:cc", "0", "-1")).contains("h1");
		long ttl = Long.parseLong(redis.server().command("PTTL", "rl:{slots:k}:cc").trim());
		assertThat(ttl).as("the lease, 10 s, and the suite's 10 minutes of slack").isBetween(600_000L, 610_000L);
		store.release("slots", "k", "h1");
		assertThat(redis.server().command("EXISTS", "rl:{slots:k}:cc")).contains("0");
		assertThat(new ConcurrencyLimit(1, java.time.Duration.ofMillis(1001)).leaseMicros()).isEqualTo(1_001_000);
	}

}
