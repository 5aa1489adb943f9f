package io.github.ratelimit.redis;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.bucket.LiveLimitsStore;
import io.github.ratelimit.bucket.LiveLimitsStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisLiveLimitsStore} on a real 3-master Redis Cluster meets the live limits
 * store contract: its two keys share the hash tag of the key prefix, so the script that
 * changes both runs on one slot.
 */
class RedisLiveLimitsStoreClusterTests extends LiveLimitsStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.cluster();

	private static final AtomicInteger PREFIXES = new AtomicInteger();

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = new LettuceConnectionFactory(new RedisClusterConfiguration(redis.nodes()));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected LiveLimitsStore createStore() {
		return new RedisLiveLimitsStore(connectionFactory, "app-" + PREFIXES.incrementAndGet());
	}

	@Test
	void everyChangeMovesTheVersionAndIsReadBackByAnotherInstance() {
		RedisLiveLimitsStore one = new RedisLiveLimitsStore(connectionFactory, "app");
		RedisLiveLimitsStore another = new RedisLiveLimitsStore(connectionFactory, "app");
		assertThat(another.version()).isZero();
		assertThat(another.load()).isEmpty();
		one.compareAndSet("api", null, "f.limit=3");
		one.compareAndSet("login", null, "f.window=1h");
		assertThat(another.version()).isEqualTo(2);
		assertThat(another.load())
			.containsExactlyInAnyOrderEntriesOf(Map.of("api", "f.limit=3", "login", "f.window=1h"));
		assertThat(another.compareAndSet("api", "f.limit=3", null)).isTrue();
		assertThat(one.version()).isEqualTo(3);
		assertThat(one.load()).containsOnlyKeys("login");
		assertThat(another.shared()).isTrue();
	}

	@Test
	void thePrefixNamespacesTheChanges() {
		new RedisLiveLimitsStore(connectionFactory, "first").compareAndSet("api", null, "f.limit=1");
		RedisLiveLimitsStore second = new RedisLiveLimitsStore(connectionFactory, "second");
		assertThat(second.load()).isEmpty();
		assertThat(second.version()).isZero();
		assertThat(second.read("api")).isNull();
	}

}
