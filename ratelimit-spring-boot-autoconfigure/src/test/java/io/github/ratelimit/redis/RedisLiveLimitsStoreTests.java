package io.github.ratelimit.redis;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.bucket.LiveLimitsStore;
import io.github.ratelimit.bucket.LiveLimitsStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisLiveLimitsStore} on a real standalone Redis meets the live limits store
 * contract; each test has a key prefix of its own.
 */
class RedisLiveLimitsStoreTests extends LiveLimitsStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final AtomicInteger PREFIXES = new AtomicInteger();

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected LiveLimitsStore createStore() {
		return new RedisLiveLimitsStore(connectionFactory, "live-" + PREFIXES.incrementAndGet());
	}

	@Test
	void overridesAreKeptUnderTheKeyPrefixInTheKeysTheReadmeNames() {
		RedisLiveLimitsStore store = new RedisLiveLimitsStore(connectionFactory, "layout");
		store.compareAndSet("api", null, "f.limit=3");
		assertThat(redis.server().command("HGET", "{layout}:live-limits", "api")).isEqualTo("f.limit=3");
		assertThat(redis.server().command("GET", "{layout}:live-limits:version")).isEqualTo("1");
		assertThat(store.shared()).isTrue();
	}

}
