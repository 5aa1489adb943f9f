package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract suite against {@link RedisRateLimitStore} on a standalone Redis through
 * Jedis: the script runs through Spring Data Redis, not the Lettuce path.
 */
class JedisRedisRateLimitStoreTests extends RateLimitStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	/** The application's factory: the store copies its settings, it need not start. */
	private static JedisConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = new JedisConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()),
				JedisClientConfiguration.builder().clientName("ratelimit-jedis-contract").usePooling().build());
	}

	@Override
	protected boolean sharesStoreAcrossTests() {
		return true;
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource time) {
		return ContractSuiteStores.onSuiteClock(RedisRateLimitStore.builderFor(connectionFactory), time);
	}

	@Test
	void decisionsRunOnJedisConnectionsMadeWithTheApplicationsSettings() {
		try (RedisRateLimitStore store = RedisRateLimitStore.builderFor(connectionFactory)
			.keyPrefix("jedis-path")
			.build()) {
			assertThat(store.decide("path", "k", List.of(LimitSpec.of(2, "1m", Algorithm.GCRA)), 1).remaining())
				.isEqualTo(1);
			assertThat(redis.server().command("CLIENT", "LIST")).contains("name=ratelimit-jedis-contract");
			assertThat(redis.server().command("KEYS", "jedis-path:*")).contains("jedis-path:{path:k}:gcra0");
		}
	}

	/**
	 * Spring Data Redis answers a bulk string as bytes: the epoch must be read as its
	 * text, or every heartbeat reads a new one and the instance takes Redis for one that
	 * lost its data (a write-back of everything it heard of, every heartbeat).
	 */
	@Test
	void successiveHeartbeatsReadTheSameEpoch() {
		try (RedisRateLimitStore store = RedisRateLimitStore.builderFor(connectionFactory)
			.keyPrefix("jedis-epoch")
			.build()) {
			Heartbeat first = store.heartbeat(Duration.ofSeconds(10));
			Heartbeat second = store.heartbeat(Duration.ofSeconds(10));
			assertThat(second.epoch()).isEqualTo(first.epoch()).doesNotStartWith("[B@");
			assertThat(redis.server().command("GET", "{jedis-epoch}:epoch")).isEqualTo(first.epoch());
		}
	}

}
