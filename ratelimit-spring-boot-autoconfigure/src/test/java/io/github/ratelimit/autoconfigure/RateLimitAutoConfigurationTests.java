package io.github.ratelimit.autoconfigure;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.acquire.Waiter;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.bucket.RateLimiters;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conditions and validation of {@link RateLimitAutoConfiguration}.
 */
class RateLimitAutoConfigurationTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	private ApplicationContextRunner withRedis() {
		return this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

	@Test
	void withoutRedisOnTheClasspathTheMemoryStoreIsUsed() {
		this.runner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class.getPackageName()))
			.run((context) -> {
				assertThat(context).hasSingleBean(InMemoryRateLimitStore.class);
				assertThat(context).hasSingleBean(Acquirer.class);
				assertThat(context).hasSingleBean(RateLimiters.class);
			});
	}

	@Test
	void withoutARedisConnectionFactoryTheMemoryStoreIsUsed() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class)
			.doesNotHaveBean(FailoverRateLimitStore.class));
	}

	@Test
	void withARedisConnectionFactoryAutoUsesRedis() {
		withRedis().run((context) -> {
			assertThat(context).hasSingleBean(RateLimitStore.class).doesNotHaveBean(InMemoryRateLimitStore.class);
			assertThat(context.getBean(FailoverRateLimitStore.class).primary()).isInstanceOf(RedisRateLimitStore.class);
			RateLimitStore store = context.getBean(RateLimitStore.class);
			List<LimitSpec> limits = List.of(LimitSpec.of(2, "1m", Algorithm.FIXED_WINDOW));
			assertThat(store.decide("auto", "k", limits, 2).allowed()).isTrue();
			assertThat(store.decide("auto", "k", limits, 1).allowed()).isFalse();
		});
	}

	@Test
	void storeMemoryWinsEvenWhenRedisIsPresent() {
		withRedis().withPropertyValues("ratelimit.store=memory")
			.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class)
				.doesNotHaveBean(FailoverRateLimitStore.class));
	}

	@Test
	void storeRedisWithRedisUsesRedis() {
		withRedis().withPropertyValues("ratelimit.store=redis", "ratelimit.key-prefix=custom")
			.run((context) -> assertThat(context.getBean(FailoverRateLimitStore.class).primary())
				.isInstanceOf(RedisRateLimitStore.class));
	}

	@Test
	void disabledCreatesNoBeans() {
		withRedis().withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitStore.class)
				.doesNotHaveBean(Acquirer.class)
				.doesNotHaveBean(BucketRegistry.class));
	}

	@Test
	void aUserStoreIsUsedInsteadOfOurs() {
		InMemoryRateLimitStore own = InMemoryRateLimitStore.create();
		withRedis().withBean("myStore", RateLimitStore.class, () -> own).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(Acquirer.class).store()).isSameAs(own);
		});
	}

	@Test
	void aUserBucketRegistryIsUsedInsteadOfOurs() {
		BucketRegistry own = new BucketRegistry(io.github.ratelimit.bucket.LimitSettings.NONE, java.util.Map.of());
		this.runner.withBean(BucketRegistry.class, () -> own)
			.run((context) -> assertThat(context.getBean(BucketRegistry.class)).isSameAs(own));
	}

	@Test
	void everyBeanCanBeReplacedByTheUser() {
		for (Class<?> configuration : List.of(RateLimitAutoConfiguration.class, RedisStoreConfiguration.class,
				MemoryStoreConfiguration.class, RateLimitAopAutoConfiguration.class,
				RateLimitWebAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class,
				RateLimitHeadersConfiguration.class, RateLimitEndpointAutoConfiguration.class,
				RateLimitMetricsAutoConfiguration.class)) {
			for (Method method : configuration.getDeclaredMethods()) {
				if (AnnotatedElementUtils.hasAnnotation(method, Bean.class)) {
					boolean overridable = AnnotatedElementUtils.hasAnnotation(method, ConditionalOnMissingBean.class)
							|| AnnotatedElementUtils.hasAnnotation(configuration, ConditionalOnMissingBean.class);
					assertThat(overridable)
						.as("%s.%s is @ConditionalOnMissingBean", configuration.getSimpleName(), method.getName())
						.isTrue();
				}
			}
		}
	}

	@Test
	void theAcquirerWaitsOnTheApplicationTaskExecutorWhenThereIsOne() {
		List<Runnable> handedOver = new CopyOnWriteArrayList<>();
		Executor applicationTaskExecutor = (task) -> {
			handedOver.add(task);
			task.run();
		};
		this.runner.withBean("applicationTaskExecutor", Executor.class, () -> applicationTaskExecutor)
			.run((context) -> {
				context.getBean(Acquirer.class).waiter().executor().execute(() -> {
				});
				assertThat(handedOver).hasSize(1);
			});
		this.runner.run((context) -> {
			Thread ranOn = CompletableFuture
				.supplyAsync(Thread::currentThread, context.getBean(Acquirer.class).waiter().executor())
				.join();
			assertThat(ranOn).isInstanceOfSatisfying(ForkJoinWorkerThread.class,
					(worker) -> assertThat(worker.getPool()).isSameAs(ForkJoinPool.commonPool()));
		});
	}

	@Test
	void aUserWaiterSetsTheClockAndTheWaitsOfEveryCaller() {
		ManualWaiter own = new ManualWaiter(new ManualTimeSource(1_000_000L));
		this.runner.withBean(Waiter.class, () -> own).run((context) -> {
			assertThat(context.getBean(Acquirer.class).waiter()).isSameAs(own);
			assertThat(context.getBean(RateLimiters.class).get("direct").bucket().name()).isEqualTo("direct");
		});
	}

	@Test
	void theDirectApiUsesABucketDefinedElsewhere() {
		this.runner.run((context) -> {
			BucketRegistry registry = context.getBean(BucketRegistry.class);
			registry.register("partner",
					new LimitSettings(Algorithm.GCRA, 2L, java.time.Duration.ofSeconds(1), null, null),
					BucketSource.ANNOTATION, "@RateLimited on PartnerClient.fetchQuote()");
			RateLimiters limiters = context.getBean(RateLimiters.class);
			assertThat(limiters.get("partner").bucket().limits())
				.containsExactly(LimitSpec.of(2, "1s", Algorithm.GCRA));
			assertThat(registry.find("partner").source()).isEqualTo(BucketSource.ANNOTATION);
			assertThat(limiters.get("partner")).isSameAs(limiters.get("partner"));
		});
	}

	@Test
	void anAnnotationReadAfterTheDirectApiUsedItsBucketWithOtherLimitsSaysWhy() {
		this.runner.run((context) -> {
			BucketRegistry registry = context.getBean(BucketRegistry.class);
			context.getBean(RateLimiters.class).get("partner");
			assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> registry.register("partner",
					new LimitSettings(null, 2L, java.time.Duration.ofSeconds(1), null, null), BucketSource.ANNOTATION,
					"@RateLimited on PartnerClient.fetchQuote()")))
				.hasMessageContaining("RateLimiters.get(\"partner\") ran before the bucket's own definition was read")
				.hasMessageContaining("ratelimit.buckets.partner");
		});
	}

	@Test
	void configuredBucketsAreResolvedWithDefaultsFillingTheGaps() {
		this.runner
			.withPropertyValues("ratelimit.defaults.algorithm=gcra", "ratelimit.defaults.limit=7",
					"ratelimit.defaults.window=10s", "ratelimit.buckets.login.algorithm=sliding-log",
					"ratelimit.buckets.login.limit=5", "ratelimit.buckets.login.window=1m",
					"ratelimit.buckets.api.limits[0].limit=10", "ratelimit.buckets.api.limits[0].window=1s",
					"ratelimit.buckets.api.limits[1].limit=1000", "ratelimit.buckets.api.limits[1].window=1h",
					"ratelimit.buckets.search.mode=shadow", "ratelimit.buckets.search.limit=50")
			.run((context) -> {
				BucketRegistry registry = context.getBean(BucketRegistry.class);
				BucketDefinition login = registry.find("login");
				assertThat(login.limits()).containsExactly(LimitSpec.of(5, "1m", Algorithm.SLIDING_LOG));
				assertThat(login.source()).isEqualTo(BucketSource.CONFIGURATION);
				assertThat(registry.find("api").limits()).containsExactly(LimitSpec.of(10, "1s", Algorithm.GCRA),
						LimitSpec.of(1000, "1h", Algorithm.GCRA));
				BucketDefinition search = registry.find("search");
				assertThat(search.mode()).isEqualTo(LimitMode.SHADOW);
				assertThat(search.limits()).containsExactly(LimitSpec.of(50, "10s", Algorithm.GCRA));
				assertThat(registry.find("unknown")).isNull();
			});
	}

	@Test
	void configurationOverridesTheCodeAndDefaultsFillTheRest() {
		this.runner.withPropertyValues("ratelimit.buckets.login.limit=3").run((context) -> {
			BucketRegistry registry = context.getBean(BucketRegistry.class);
			BucketDefinition login = registry.register("login",
					new io.github.ratelimit.bucket.LimitSettings(Algorithm.SLIDING_LOG, 5L,
							java.time.Duration.ofMinutes(2), null, null),
					BucketSource.ANNOTATION, "@RateLimited on Login.login()");
			assertThat(login.limits()).containsExactly(LimitSpec.of(3, "2m", Algorithm.SLIDING_LOG));
		});
	}

	@Test
	void aNegativeBucketLimitFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.buckets.login.limit=-5", "ratelimit.buckets.login.limit", "-5");
	}

	@Test
	void aZeroWindowFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.buckets.login.window=0s", "ratelimit.buckets.login.window", "must be positive");
	}

	@Test
	void aZeroBurstFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.buckets.api.burst=0", "ratelimit.buckets.api.burst", "must be positive");
	}

	@Test
	void anInvalidSecondLimitFailsStartupNamingItsIndex() {
		assertStartupFailure("ratelimit.buckets.api.limits[0].limit=10", "ratelimit.buckets.api.limits[1].limit=0",
				"ratelimit.buckets.api.limits[1].limit");
	}

	@Test
	void anUnknownAlgorithmFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.buckets.api.algorithm=leaky", "ratelimit.buckets.api.algorithm", "leaky");
	}

	@Test
	void anUnparseableWindowFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.buckets.api.window=soon", "ratelimit.buckets.api.window", "soon");
	}

	@Test
	void invalidDefaultsFailStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.defaults.limit=0", "Property: ratelimit.defaults.limit Value: 0",
				"must be positive");
	}

	@Test
	void defaultsAreRefusedInLimitSpecsWordsBesideTheValue() {
		assertStartupFailure("ratelimit.defaults.algorithm=sliding-log", "ratelimit.defaults.limit=2000000",
				"Property: ratelimit.defaults.limit Value: 2000000 Reason: must be at most 1000000 with sliding-log (it"
						+ " keeps one entry per permit); use sliding-window-counter for larger limits");
	}

	@Test
	void aZeroRedisTimeoutFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.redis.timeout=0ms", "Property: ratelimit.redis.timeout", "must be positive");
	}

	@Test
	void theRedisStoresAndTheBreakersSettingsAreCheckedWhenBoundWhicheverStoreIsUsed() {
		// Checked with the other settings, not when the Redis store is built: the memory
		// store here.
		assertStartupFailure("ratelimit.breaker.failure-rate-threshold=0",
				"Property: ratelimit.breaker.failure-rate-threshold Value: 0 Reason: must be a percentage between 1"
						+ " and 100");
		assertStartupFailure("ratelimit.breaker.window=0s",
				"Property: ratelimit.breaker.window Value: PT0S Reason:" + " must be positive");
		assertStartupFailure("ratelimit.breaker.wait-in-open-state=-1s",
				"Property: ratelimit.breaker.wait-in-open-state Value: PT-1S Reason: must be positive");
		assertStartupFailure("ratelimit.breaker.probes=0",
				"Property: ratelimit.breaker.probes Value: 0 Reason: must be at least 1");
		assertStartupFailure("ratelimit.fallback.remembered-keys=0",
				"Property: ratelimit.fallback.remembered-keys Value: 0 Reason: must be at least 1");
		assertStartupFailure("ratelimit.fallback.instances=0",
				"Property: ratelimit.fallback.instances Value: 0 Reason: must be at least 1");
		assertStartupFailure("ratelimit.redis.connect-timeout=0s",
				"Property: ratelimit.redis.connect-timeout Value: PT0S Reason: must be positive");
		assertStartupFailure("ratelimit.redis.heartbeat-interval=0s",
				"Property: ratelimit.redis.heartbeat-interval Value: PT0S Reason: must be positive");
		assertStartupFailure("ratelimit.redis.live-limits-poll-interval=0s",
				"Property: ratelimit.redis.live-limits-poll-interval Value: PT0S Reason: must be positive");
		assertStartupFailure("ratelimit.redis.local-rejections.max-keys=0",
				"Property: ratelimit.redis.local-rejections.max-keys Value: 0 Reason: must be at least 1");
		assertStartupFailure("ratelimit.redis.local-rejections.max-age=0s",
				"Property: ratelimit.redis.local-rejections.max-age Value: PT0S Reason: must be positive");
		// Off, its settings are not used.
		this.runner
			.withPropertyValues("ratelimit.redis.local-rejections.enabled=false",
					"ratelimit.redis.local-rejections.max-keys=0")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aKeyPrefixWithBracesFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.key-prefix=rl{x}", "Property: ratelimit.key-prefix Value: rl{x}", "braces");
	}

	@Test
	void aMalformedTrustedProxyFailsStartupNamingThePropertyAndTheValue() {
		assertStartupFailure("ratelimit.client-ip.trusted-proxies=10.0.0.0/8,10.0.0/8",
				"Property: ratelimit.client-ip.trusted-proxies Value: [10.0.0.0/8, 10.0.0/8] Reason: [1] '10.0.0/8' is"
						+ " not an IP address or CIDR range: '10.0.0' is not an IP address; write e.g. 10.0.0.0/8");
		assertStartupFailure("ratelimit.client-ip.trusted-proxies[0]=::1", "ratelimit.client-ip.trusted-proxies[1]=/8",
				"ratelimit.client-ip.trusted-proxies[2]=2001:db8::/129",
				"Property: ratelimit.client-ip.trusted-proxies Value: [::1, /8, 2001:db8::/129] Reason: [1] '/8'",
				"Property: ratelimit.client-ip.trusted-proxies Value: [::1, /8, 2001:db8::/129] Reason: [2]"
						+ " '2001:db8::/129' is not an IP address or CIDR range: the prefix length 129 is more than the"
						+ " 128 bits of an IPv6 address");
	}

	@Test
	void aStatusPathThatIsNoPlainPathFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.status-endpoint.path=rate-limit",
				"Property: ratelimit.status-endpoint.path Value: rate-limit", "must be a plain path");
		assertStartupFailure("ratelimit.status-endpoint.path=/rate/**", "Property: ratelimit.status-endpoint.path",
				"must be a plain path");
	}

	@Test
	void theLowestFilterOrderFailsStartupWhileTheStatusEndpointMustRunBeforeTheFilter() {
		assertStartupFailure("ratelimit.status-endpoint.enabled=true", "ratelimit.filter.order=" + Integer.MIN_VALUE,
				"Property: ratelimit.filter.order", "status endpoint can run before the filter");
		this.runner.withPropertyValues("ratelimit.filter.order=" + Integer.MIN_VALUE)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void negativeTrustedHopsOrABadHeaderFailStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.client-ip.trusted-hops=-1", "Property: ratelimit.client-ip.trusted-hops",
				"must not be negative");
		assertStartupFailure("ratelimit.client-ip.header=X Forwarded For", "Property: ratelimit.client-ip.header",
				"must be a header name");
	}

	@Test
	void theClientIpResolverTrustsWhatTheClientIpPropertiesSay() {
		this.runner.run((context) -> assertThat(context.getBean(ClientIpResolver.class).trustsNothing()).isTrue());
		this.runner
			.withPropertyValues("ratelimit.client-ip.trusted-proxies=10.0.0.0/8, ::1",
					"ratelimit.client-ip.trusted-hops=1", "ratelimit.client-ip.header=Forwarded")
			.run((context) -> assertThat(context.getBean(ClientIpResolver.class))
				.hasToString("Forwarded past trusted proxies [10.0.0.0/8, ::1/128] and 1 hop"));
	}

	@Test
	void zeroMaxKeysFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.memory.max-keys=0", "Property: ratelimit.memory.max-keys Value: 0",
				"at least 1");
	}

	@Test
	void anUnknownStoreTypeFailsStartupNamingTheProperty() {
		assertStartupFailure("ratelimit.store=cassandra", "ratelimit.store", "cassandra");
	}

	private void assertStartupFailure(String... propertiesThenExpectedFragments) {
		List<String> properties = java.util.Arrays.stream(propertiesThenExpectedFragments)
			.filter((p) -> p.contains("="))
			.toList();
		List<String> fragments = java.util.Arrays.stream(propertiesThenExpectedFragments)
			.filter((p) -> !p.contains("="))
			.toList();
		this.runner.withPropertyValues(properties.toArray(new String[0])).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(reported(context.getStartupFailure())).contains(fragments);
		});
	}

	/**
	 * Returns what Spring Boot reports of a startup failure: the messages of its causes,
	 * and for a failed validation of the properties each error as the failure analysis
	 * shows it ({@code Property: ratelimit.memory.max-keys ... Reason: must be at least
	 * 1}).
	 */
	private static String reported(Throwable failure) {
		StringBuilder messages = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			messages.append(t.getMessage()).append('\n');
			if (t instanceof BindValidationException validation) {
				for (ObjectError error : validation.getValidationErrors()) {
					if (error instanceof FieldError field) {
						messages.append("Property: ")
							.append(field.getObjectName())
							.append('.')
							.append(field.getField())
							.append(" Value: ")
							.append(field.getRejectedValue())
							.append(" Reason: ")
							.append(field.getDefaultMessage())
							.append('\n');
					}
				}
			}
		}
		return messages.toString();
	}

	@Test
	void invalidPropertiesAreReportedOnceAsBindingValidationErrors() {
		this.runner.withPropertyValues("ratelimit.memory.max-keys=0", "ratelimit.redis.timeout=0ms").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(reported(context.getStartupFailure()))
				.contains("Property: ratelimit.memory.max-keys Value: 0 Reason: must be at least 1")
				.contains("Property: ratelimit.redis.timeout Value: PT0S Reason: must be positive");
		});
	}

}
