package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.mock.env.MockEnvironment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.validation.FieldError;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.failover.BreakerSettings;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.health.RateLimitHealthIndicator;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.status.BreakerState;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store's auto-configuration: when it applies, how it starts, its settings, the
 * failure analysis when it cannot exist, and the {@code ratelimit} health indicator.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisStoreAutoConfigurationTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitHealthContributorAutoConfiguration.class));

	private ApplicationContextRunner withRedis() {
		return this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

	@Test
	void theStoreIsStartedWithTheContextAndReportsHealthy() {
		withRedis().run((context) -> {
			assertThat(context).hasSingleBean(RedisStoreLifecycle.class);
			RedisRateLimitStore store = (RedisRateLimitStore) context.getBean(FailoverRateLimitStore.class).primary();
			assertThat(store.isStarted()).as("connected, script loaded, warmed up").isTrue();
			Health health = context.getBean(RateLimitHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails())
				.containsExactlyInAnyOrderEntriesOf(Map.of("store", "redis", "state", "healthy", "breaker", "closed",
						"failureMode", "fallback", "failures", 0L, "instances", 1, "maxmemoryPolicy", "noeviction"));
		});
	}

	/**
	 * An application on Jedis, as Spring Boot configures it when Lettuce is excluded.
	 */
	private ApplicationContextRunner withJedis() {
		return withRedis().withClassLoader(new FilteredClassLoader("io.lettuce"));
	}

	@Test
	void onLettuceTheStoreSaysItRunsThroughLettuce(CapturedOutput output) {
		withRedis().run((context) -> assertThat(output)
			.contains("Rate limit store: Redis through Lettuce (" + LettuceConnectionFactory.class.getName() + ")"));
	}

	@Test
	void onJedisTheStoreRunsOnRedisThroughSpringDataRedisAndSaysSo(CapturedOutput output) {
		withJedis().run((context) -> {
			assertThat(context.getBean(RedisConnectionFactory.class)).isInstanceOf(JedisConnectionFactory.class);
			assertDecidesOnRedis(context, "jedis-auto");
			assertThat(output).contains("Rate limit store: Redis through Spring Data Redis ("
					+ JedisConnectionFactory.class.getName() + ")");
			assertThat(context.getBean(RateLimitHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
		});
	}

	@Test
	void storeRedisWorksOnJedis() {
		withJedis().withPropertyValues("ratelimit.store=redis")
			.run((context) -> assertDecidesOnRedis(context, "jedis-explicit"));
	}

	@Test
	void anApplicationsOwnJedisConnectionFactoryIsUsed() {
		this.runner
			.withBean(JedisConnectionFactory.class,
					() -> new JedisConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port())))
			.run((context) -> assertDecidesOnRedis(context, "jedis-bean"));
	}

	/**
	 * Asserts that the context's store is the Redis store, started, and that a decision
	 * writes its key to the test's Redis.
	 */
	private static void assertDecidesOnRedis(AssertableApplicationContext context, String bucket) {
		assertThat(context).hasNotFailed();
		RateLimitStore store = context.getBean(FailoverRateLimitStore.class).primary();
		assertThat(store).isInstanceOfSatisfying(RedisRateLimitStore.class,
				(redisStore) -> assertThat(redisStore.isStarted()).isTrue());
		assertThat(store.decide(bucket, "k", List.of(LimitSpec.of(2, "1m", Algorithm.GCRA)), 1).remaining())
			.isEqualTo(1);
		assertThat(redis.server().command("KEYS", "rl:{" + bucket + ":*")).contains("rl:{" + bucket + ":k}:gcra0");
	}

	@Test
	void aRepeatedRejectionIsAnsweredLocallyUnlessDisabled() {
		withRedis().run((context) -> assertThat(localRejectionsAfterThreeRequests(context)).isEqualTo(1));
		withRedis().withPropertyValues("ratelimit.redis.local-rejections.enabled=false")
			.run((context) -> assertThat(localRejectionsAfterThreeRequests(context)).isZero());
	}

	@Test
	void concurrentDecisionsOnOneKeyAreCoalescedUnlessDisabled() {
		withRedis().run((context) -> assertThat(redisStore(context).isCoalescing()).isTrue());
		withRedis().withPropertyValues("ratelimit.redis.coalescing.enabled=false")
			.run((context) -> assertThat(redisStore(context).isCoalescing()).isFalse());
	}

	private static RedisRateLimitStore redisStore(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed();
		return (RedisRateLimitStore) context.getBean(FailoverRateLimitStore.class).primary();
	}

	private static long localRejectionsAfterThreeRequests(AssertableApplicationContext context) {
		FailoverRateLimitStore store = context.getBean(FailoverRateLimitStore.class);
		java.util.List<io.github.ratelimit.LimitSpec> limits = java.util.List
			.of(io.github.ratelimit.LimitSpec.of(1, "1h", io.github.ratelimit.Algorithm.SLIDING_LOG));
		String key = "local-" + System.nanoTime();
		assertThat(store.decide("b", key, limits, 1).allowed()).isTrue();
		assertThat(store.decide("b", key, limits, 1).allowed()).isFalse();
		assertThat(store.decide("b", key, limits, 1).allowed()).isFalse();
		return store.status().localRejections();
	}

	@Test
	void withRedisDownTheContextStillStartsAndTheFailureModeApplies() {
		assertDegradedWhileRedisIsDown(this.runner);
	}

	@Test
	void withRedisDownOnJedisTheFailureModeAppliesAlike() {
		assertDegradedWhileRedisIsDown(this.runner.withClassLoader(new FilteredClassLoader("io.lettuce")));
	}

	private static void assertDegradedWhileRedisIsDown(ApplicationContextRunner runner) {
		runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + unusedPort(),
					"ratelimit.failure-mode=closed")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				FailoverRateLimitStore store = context.getBean(FailoverRateLimitStore.class);
				assertThat(((RedisRateLimitStore) store.primary()).isStarted()).isFalse();
				RateLimitHealthIndicator indicator = context.getBean(RateLimitHealthIndicator.class);
				assertThat(indicator.health().getStatus())
					.as("before any decision: the heartbeat at startup found Redis unreachable")
					.isEqualTo(Status.OUT_OF_SERVICE);
				assertThat(store.status().degraded()).isTrue();
				try {
					store.decide("b", "k", java.util.List
						.of(io.github.ratelimit.LimitSpec.of(1, "1m", io.github.ratelimit.Algorithm.GCRA)), 1);
				}
				catch (io.github.ratelimit.store.StoreUnavailableException ex) {
					// failure-mode closed
				}
				Health health = indicator.health();
				assertThat(health.getStatus()).as("closed mode: out of the load balancer")
					.isEqualTo(Status.OUT_OF_SERVICE);
				// Failures: the decision, and each check's own try of the store.
				assertThat(health.getDetails()).containsEntry("state", "degraded").containsEntry("failures", 3L);
			});
	}

	@Test
	void closingTheContextClosesTheStoresConnectionOnceBeforeTheClient(CapturedOutput output) {
		withRedis().run((context) -> {
			RedisRateLimitStore store = (RedisRateLimitStore) context.getBean(FailoverRateLimitStore.class).primary();
			assertThat(store.isStarted()).isTrue();
		});
		assertThat(output).doesNotContain("Connection is already closed").doesNotContain("WARN");
	}

	@Test
	void breakerAndFallbackSettingsAreApplied() {
		withRedis()
			.withPropertyValues("ratelimit.breaker.window=3s", "ratelimit.breaker.failure-rate-threshold=80",
					"ratelimit.breaker.wait-in-open-state=5s", "ratelimit.breaker.probes=7",
					"ratelimit.fallback.instances=4")
			.run((context) -> {
				FailoverRateLimitStore store = context.getBean(FailoverRateLimitStore.class);
				assertThat(store.circuitBreaker().settings())
					.isEqualTo(new BreakerSettings(Duration.ofSeconds(3), 80, Duration.ofSeconds(5), 7));
				assertThat(store.circuitBreaker().state()).isEqualTo(BreakerState.CLOSED);
				assertThat(store.instances()).isEqualTo(4);
			});
	}

	@Test
	void invalidSettingsFailStartupNamingTheProperty() {
		assertInvalid("ratelimit.breaker.failure-rate-threshold=0", "ratelimit.breaker.failure-rate-threshold");
		assertInvalid("ratelimit.breaker.failure-rate-threshold=101", "ratelimit.breaker.failure-rate-threshold");
		assertInvalid("ratelimit.breaker.window=0s", "ratelimit.breaker.window");
		assertInvalid("ratelimit.breaker.wait-in-open-state=-1s", "ratelimit.breaker.wait-in-open-state");
		assertInvalid("ratelimit.breaker.probes=0", "ratelimit.breaker.probes");
		assertInvalid("ratelimit.fallback.instances=0", "ratelimit.fallback.instances");
		assertInvalid("ratelimit.redis.connect-timeout=0s", "ratelimit.redis.connect-timeout");
	}

	private void assertInvalid(String setting, String property) {
		withRedis().withPropertyValues(setting).run((context) -> {
			assertThat(context).hasFailed();
			// Checked with the other settings when they are bound.
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(BindValidationException.class,
						(ex) -> assertThat(ex.getValidationErrors().getAllErrors())
							.map((error) -> "ratelimit." + ((FieldError) error).getField())
							.containsExactly(property));
		});
	}

	@Test
	void storeRedisWithoutRedisFailsAndTheAnalysisNamesThePropertyAndTheFix() {
		this.runner.withPropertyValues("ratelimit.store=redis").run((context) -> {
			FailureAnalysis analysis = analyze(context, new DefaultListableBeanFactory());
			assertThat(analysis.getDescription()).contains("ratelimit.store is 'redis'")
				.contains("no RedisConnectionFactory bean");
			assertThat(analysis.getAction()).contains("spring.data.redis.host").contains("ratelimit.store=memory");
		});
	}

	@Test
	void storeRedisWithoutSpringDataRedisSaysSo() {
		FilteredClassLoader withoutRedis = new FilteredClassLoader(RedisConnectionFactory.class.getPackageName());
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.setBeanClassLoader(withoutRedis);
		this.runner.withPropertyValues("ratelimit.store=redis")
			.withClassLoader(withoutRedis)
			.run((context) -> assertThat(analyze(context, beanFactory).getDescription())
				.contains("Spring Data Redis is not on the class path"));
	}

	@Test
	void twoConnectionFactoriesAndNoPrimaryGiveNoStoreAndTheAnalysisSaysWhichToMark() {
		this.runner.withPropertyValues("ratelimit.store=redis")
			.withBean("first", LettuceConnectionFactory.class, LettuceConnectionFactory::new)
			.withBean("second", LettuceConnectionFactory.class, LettuceConnectionFactory::new)
			.run((context) -> {
				DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
				beanFactory.registerBeanDefinition("first", new RootBeanDefinition(LettuceConnectionFactory.class));
				beanFactory.registerBeanDefinition("second", new RootBeanDefinition(LettuceConnectionFactory.class));
				FailureAnalysis analysis = analyze(context, beanFactory);
				assertThat(analysis.getDescription()).contains("2 RedisConnectionFactory beans [first, second]");
				assertThat(analysis.getAction()).contains("@Primary");
			});
	}

	@Test
	void storeAutoWithTwoConnectionFactoriesFallsBackToMemoryAndSaysWhy(CapturedOutput output) {
		this.runner.withBean("first", LettuceConnectionFactory.class, LettuceConnectionFactory::new)
			.withBean("second", LettuceConnectionFactory.class, LettuceConnectionFactory::new)
			.run((context) -> assertThat(context.getBean(RateLimitStore.class).name()).isEqualTo("memory"));
		assertThat(output).contains("2 RedisConnectionFactory beans [first, second]")
			.contains("@Primary")
			.contains("ratelimit.store=memory");
	}

	@Test
	void storeMemoryWithConnectionFactoriesSaysNothing(CapturedOutput output) {
		this.runner.withPropertyValues("ratelimit.store=memory")
			.withBean("first", LettuceConnectionFactory.class, LettuceConnectionFactory::new)
			.withBean("second", LettuceConnectionFactory.class, LettuceConnectionFactory::new)
			.run((context) -> assertThat(context.getBean(RateLimitStore.class).name()).isEqualTo("memory"));
		assertThat(output).doesNotContain("RedisConnectionFactory beans");
	}

	@Test
	void theHealthIndicatorCanBeTurnedOffAndNeedsSpringBootHealth() {
		withRedis().withPropertyValues("management.health.ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitHealthIndicator.class));
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	@Test
	void theMemoryStoreReportsHealthyWithoutABreaker() {
		this.runner.run((context) -> assertThat(context.getBean(RateLimitHealthIndicator.class).health().getDetails())
			.containsEntry("store", "memory")
			.containsEntry("breaker", "none"));
	}

	/**
	 * Analyses the context's startup failure as Spring Boot would, with the beans the
	 * failed context had (a failed context no longer answers).
	 */
	private static FailureAnalysis analyze(AssertableApplicationContext context, BeanFactory beans) {
		assertThat(context).hasFailed();
		assertThat(context.getStartupFailure()).rootCause()
			.isInstanceOf(NoSuchBeanDefinitionException.class)
			.hasMessageContaining(RateLimitStore.class.getName());
		FailureAnalysis analysis = new RedisStoreMissingFailureAnalyzer(beans,
				new MockEnvironment().withProperty("ratelimit.store", "redis"))
			.analyze(context.getStartupFailure());
		assertThat(analysis).as("analysis of %s", context.getStartupFailure()).isNotNull();
		return analysis;
	}

	/**
	 * A port nothing listens on, for a Redis that refuses connections.
	 */
	static int unusedPort() {
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

}
