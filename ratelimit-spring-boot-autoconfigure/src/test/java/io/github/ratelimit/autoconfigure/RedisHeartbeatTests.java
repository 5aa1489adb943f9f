package io.github.ratelimit.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.InMemoryLiveLimitsStore;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.bucket.LiveLimits;
import io.github.ratelimit.bucket.LiveLimitsStore;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisHeartbeat} on a real Redis, with two instances (two stores, each with its
 * own connection and heartbeat) on the same key prefix: they count each other, a reset
 * through one reaches the other's remembered rejections, a Redis that lost its data gets
 * the usage back, a live change is read when its version moves, and a Redis that stops
 * answering shows in the store's state without any request.
 */
class RedisHeartbeatTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(5, "1h", Algorithm.SLIDING_LOG));

	/** Heartbeats are run by the test, not on a schedule. */
	private static final Duration INTERVAL = Duration.ofHours(1);

	/** Generous: write-backs run on a thread of their own. */
	private static final Duration BOUND = Duration.ofSeconds(30);

	private static RedisClient client;

	private final List<Instance> instances = new ArrayList<>();

	@BeforeAll
	static void connect() {
		client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
	}

	@AfterAll
	static void disconnect() {
		client.shutdown();
	}

	@BeforeEach
	void flush() {
		redis.server().flushAll();
	}

	@AfterEach
	void stopInstances() {
		this.instances.forEach(Instance::close);
		if (redis.server().isPaused()) {
			redis.server().resume();
		}
		if (!redis.server().isRunning()) {
			redis.server().start();
		}
	}

	private Instance instance() {
		return instance(null);
	}

	private Instance instance(@Nullable RedisEvictionPolicy evictionPolicy) {
		return instance(evictionPolicy, () -> {
		});
	}

	private Instance instance(@Nullable RedisEvictionPolicy evictionPolicy, Runnable answersAgain) {
		Instance instance = new Instance(new LiveLimits(new BucketRegistry(LimitSettings.NONE, Map.of()),
				new InMemoryLiveLimitsStore(), new LiveLimitSettingsParser(), false, Clock.systemUTC()), evictionPolicy,
				answersAgain);
		this.instances.add(instance);
		return instance;
	}

	@Test
	void theInstancesCountEachOtherAndDivideTheLimitsWhileRedisFails() {
		Instance a = instance();
		Instance b = instance();
		a.heartbeat.beat();
		b.heartbeat.beat();
		a.heartbeat.beat();
		assertThat(a.store.instances()).isEqualTo(2);
		assertThat(b.store.instances()).isEqualTo(2);
		assertThat(a.store.status().instances()).isEqualTo(2);
	}

	@Test
	void aResetThroughOneInstanceReachesTheRejectionsTheOtherRemembers() {
		Instance a = instance();
		Instance b = instance();
		a.heartbeat.beat();
		b.heartbeat.beat();
		for (int i = 0; i < 5; i++) {
			assertThat(b.store.decide("api", "alice", LIMITS, 1).allowed()).isTrue();
		}
		assertThat(b.store.decide("api", "alice", LIMITS, 1).allowed()).isFalse();
		assertThat(b.rejections.isEmpty()).as("B answers alice's rejection itself").isFalse();

		a.store.reset("api", "alice", LIMITS);
		assertThat(b.store.decide("api", "alice", LIMITS, 1).allowed()).as("until its next heartbeat").isFalse();
		b.heartbeat.beat();
		assertThat(b.rejections.isEmpty()).isTrue();
		assertThat(b.store.decide("api", "alice", LIMITS, 1).allowed()).isTrue();
	}

	@Test
	void aRedisThatLostItsDataGetsTheUsageHeardBack() {
		Instance a = instance();
		a.heartbeat.beat();
		for (int i = 0; i < 4; i++) {
			assertThat(a.store.decide("api", "alice", LIMITS, 1).allowed()).isTrue();
		}
		redis.server().restart();
		awaitCondition("a heartbeat on the restarted Redis", () -> {
			a.heartbeat.beat();
			return !a.store.isDegraded();
		});
		awaitCondition("the write-back", () -> a.store.pendingWriteBacks() == 0);
		assertThat(a.store.decide("api", "alice", LIMITS, 1).allowed()).isTrue();
		assertThat(a.store.decide("api", "alice", LIMITS, 1).allowed()).as("4 were used before the restart").isFalse();
	}

	@Test
	void aLiveChangeIsReadWhenItsVersionMovesAndAFailedReadIsTriedAgain() {
		AtomicBoolean failing = new AtomicBoolean(true);
		int[] reads = new int[1];
		BucketRegistry registry = new BucketRegistry(LimitSettings.NONE, Map.of());
		InMemoryLiveLimitsStore overrides = new InMemoryLiveLimitsStore();
		LiveLimitsStore flaky = new LiveLimitsStore() {

			@Override
			public long version() {
				return overrides.version();
			}

			@Override
			public Map<String, String> load() {
				reads[0]++;
				if (failing.get()) {
					throw new IllegalStateException("Redis is down");
				}
				return overrides.load();
			}

			@Override
			public @Nullable String read(String bucket) {
				return overrides.read(bucket);
			}

			@Override
			public boolean compareAndSet(String bucket, @Nullable String expected, @Nullable String override) {
				return overrides.compareAndSet(bucket, expected, override);
			}

			@Override
			public boolean shared() {
				return true;
			}

		};
		LiveLimits liveLimits = new LiveLimits(registry, flaky, new LiveLimitSettingsParser(), false,
				Clock.systemUTC());
		Instance a = new Instance(liveLimits, null, () -> {
		});
		this.instances.add(a);
		redis.server().command("INCR", "{rl}:live-limits:version");
		a.heartbeat.beat();
		a.heartbeat.beat();
		failing.set(false);
		a.heartbeat.beat();
		a.heartbeat.beat();
		assertThat(reads[0]).as("read at each heartbeat until a read succeeded, then not again").isEqualTo(3);
	}

	@Test
	void aRedisThatStopsAnsweringShowsWithoutAnyRequest() {
		Instance a = instance();
		a.heartbeat.beat();
		assertThat(a.store.isDegraded()).isFalse();
		redis.server().pause();
		a.heartbeat.beat();
		assertThat(a.store.isDegraded()).isTrue();
		redis.server().resume();
		awaitCondition("a heartbeat answered", () -> {
			a.heartbeat.beat();
			return !a.store.isDegraded();
		});
	}

	@Test
	void theEvictionPolicyIsReadWhenRedisFirstAnswersAndAgainWhenItAnswersAfterFailing() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try {
			RedisEvictionPolicy policy = new RedisEvictionPolicy(factory);
			Instance a = instance(policy);
			assertThat(policy.policy()).isEqualTo("unknown");
			a.heartbeat.beat();
			assertThat(policy.policy()).as("read at once the first time").isEqualTo("noeviction");
			redis.server().command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
			a.heartbeat.beat();
			assertThat(policy.policy()).as("not read again while Redis answers").isEqualTo("noeviction");
			redis.server().pause();
			a.heartbeat.beat();
			redis.server().resume();
			awaitCondition("a heartbeat answered", () -> {
				a.heartbeat.beat();
				return !a.store.isDegraded();
			});
			awaitCondition("the policy read again", () -> policy.policy().equals("allkeys-lru"));
		}
		finally {
			redis.server().command("CONFIG", "SET", "maxmemory-policy", "noeviction");
			factory.destroy();
		}
	}

	@Test
	void whatWaitsForRedisToAnswerAgainRunsWhenItDoesAfterAFailureNotAtStartup() {
		AtomicInteger answeredAgain = new AtomicInteger();
		Instance a = instance(null, answeredAgain::incrementAndGet);
		a.heartbeat.start();
		assertThat(a.store.isDegraded()).isFalse();
		assertThat(answeredAgain).as("not at startup").hasValue(0);
		// Beats by hand: the test's interval is an hour.
		a.heartbeat.beat();
		assertThat(answeredAgain).as("Redis answering all along").hasValue(0);
		redis.server().pause();
		a.heartbeat.beat();
		assertThat(a.store.isDegraded()).isTrue();
		redis.server().resume();
		awaitCondition("Redis answering again", () -> {
			a.heartbeat.beat();
			return !a.store.isDegraded();
		});
		a.heartbeat.beat();
		assertThat(answeredAgain).as("told once").hasValue(1);
	}

	private static void awaitCondition(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + BOUND.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	/**
	 * One instance: a failover store on a Redis store of its own, and its heartbeat.
	 */
	private static final class Instance implements AutoCloseable {

		final RejectionCache rejections = new RejectionCache(100, Duration.ofHours(1));

		final FailoverRateLimitStore store;

		final RedisHeartbeat heartbeat;

		Instance(LiveLimits liveLimits, @Nullable RedisEvictionPolicy evictionPolicy, Runnable answersAgain) {
			RedisRateLimitStore redis = RedisRateLimitStore.builder(client)
				.timeout(Duration.ofMillis(500))
				.connectTimeout(Duration.ofSeconds(30))
				.build();
			this.store = FailoverRateLimitStore.builder(redis, InMemoryRateLimitStore.create())
				.failureMode(FailureMode.FALLBACK)
				.rejectionCache(this.rejections)
				.build();
			StaticListableBeanFactory beans = new StaticListableBeanFactory(Map.of("store", this.store));
			this.heartbeat = new RedisHeartbeat(beans.getBeanProvider(RateLimitStore.class), liveLimits, INTERVAL,
					Duration.ofSeconds(30), evictionPolicy, answersAgain);
		}

		@Override
		public void close() {
			this.heartbeat.stop();
			this.store.close();
		}

	}

}
