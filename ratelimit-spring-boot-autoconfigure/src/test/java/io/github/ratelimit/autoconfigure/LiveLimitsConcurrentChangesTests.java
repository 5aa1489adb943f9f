package io.github.ratelimit.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSettings;
import io.github.ratelimit.bucket.LimitOverride;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.bucket.LiveLimits;
import io.github.ratelimit.redis.RedisLiveLimitsStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances, each with its own registry and Redis connection, change the same bucket
 * at the same moment on one real Redis: both changes are kept, whatever the timing. Each
 * trial releases the two changes together from a barrier, so that they race between
 * reading the stored change and saving the merged one.
 */
class LiveLimitsConcurrentChangesTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final int TRIALS = 50;

	private final ExecutorService threads = Executors.newFixedThreadPool(2);

	private LettuceConnectionFactory connectionA;

	private LettuceConnectionFactory connectionB;

	@BeforeEach
	void connect() {
		this.connectionA = connect(redis);
		this.connectionB = connect(redis);
	}

	@AfterEach
	void disconnect() {
		this.threads.shutdownNow();
		this.connectionA.destroy();
		this.connectionB.destroy();
	}

	@Test
	void twoConcurrentChangesOfOneBucketOnTwoInstancesAreBothKept() throws Exception {
		BucketRegistry registryA = registry();
		BucketRegistry registryB = registry();
		LiveLimits instanceA = liveLimits(registryA, this.connectionA);
		LiveLimits instanceB = liveLimits(registryB, this.connectionB);
		for (int trial = 1; trial <= TRIALS; trial++) {
			instanceA.clear("api", "setup");
			instanceA.refresh();
			instanceB.refresh();
			assertThat(registryB.find("api").override()).isNull();
			CyclicBarrier start = new CyclicBarrier(2);
			Future<?> a = this.threads.submit(() -> {
				start.await();
				return instanceA.set("api", Map.of("limit", "3", "window", "1m"), "alice");
			});
			Future<?> b = this.threads.submit(() -> {
				start.await();
				return instanceB.set("api", Map.of("burst", "5"), "bob");
			});
			a.get(30, TimeUnit.SECONDS);
			b.get(30, TimeUnit.SECONDS);
			instanceA.refresh();
			instanceB.refresh();
			for (BucketRegistry registry : List.of(registryA, registryB)) {
				LimitOverride override = registry.find("api").override();
				assertThat(override).as("trial %d", trial).isNotNull();
				assertThat(override.fields()).as("trial %d: both changes kept", trial)
					.containsOnly(Map.entry("limit", "3"), Map.entry("window", "1m"), Map.entry("burst", "5"));
			}
		}
	}

	private static LettuceConnectionFactory connect(RedisServerExtension redis) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static BucketRegistry registry() {
		return new BucketRegistry(new LimitSettings(Algorithm.TOKEN_BUCKET, 100L, Duration.ofMinutes(1), null, null),
				Map.of("api", new BucketSettings(new LimitSettings(null, 10L, Duration.ofSeconds(10), null, null),
						List.of(), LimitMode.ENFORCE)));
	}

	private static LiveLimits liveLimits(BucketRegistry registry, LettuceConnectionFactory connection) {
		return new LiveLimits(registry, new RedisLiveLimitsStore(connection, "race"), new LiveLimitSettingsParser(),
				true, Clock.systemUTC());
	}

}
