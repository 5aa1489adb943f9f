package io.github.ratelimit.autoconfigure;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.function.IntSupplier;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;

import io.github.ratelimit.concurrency.ConcurrencyObserver;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.InMemoryConcurrencyStore;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.concurrency.OnStoreFailure;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.DecisionTracer;
import io.github.ratelimit.acquire.RateLimitObserver;
import io.github.ratelimit.acquire.Waiter;
import io.github.ratelimit.autoconfigure.RateLimitStartupSummary.StoreTarget;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.InMemoryLiveLimitsStore;
import io.github.ratelimit.bucket.KeyStateReader;
import io.github.ratelimit.bucket.LiveLimits;
import io.github.ratelimit.bucket.LiveLimitsStore;
import io.github.ratelimit.bucket.RateLimiters;
import io.github.ratelimit.clientip.AddressRange;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.status.StoreStatus;
import io.github.ratelimit.status.StoreStatusSource;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Rate limiting: the store (Redis or in-memory, by {@code ratelimit.store}), the bucket
 * registry, and the {@link Acquirer} every integration takes its permits through. Needs
 * nothing but this library: Redis, the web stack, AOP, actuator and Micrometer each add
 * their part when present.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RedisStoreConfiguration.class, MemoryStoreConfiguration.class })
public final class RateLimitAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	BucketRegistry rateLimitBucketRegistry(RateLimitProperties properties) {
		BucketRegistry registry = new BucketRegistry(RateLimitSettingsMapper.limit(properties.getDefaults()),
				RateLimitSettingsMapper.buckets(properties.getBuckets()));
		registry.validateConfiguration();
		return registry;
	}

	/**
	 * Live limit changes, kept in Redis with the Redis store (shared by every instance),
	 * otherwise in this instance's memory.
	 */
	@Bean
	@ConditionalOnMissingBean
	LiveLimits rateLimitLiveLimits(BucketRegistry registry, ObjectProvider<LiveLimitsStore> store,
			RateLimitProperties properties) {
		return new LiveLimits(registry, store.getIfAvailable(InMemoryLiveLimitsStore::new),
				new LiveLimitSettingsParser(), properties.getEndpoint().isLimitsWriteEnabled(), Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitExpressions rateLimitExpressions(BeanFactory beanFactory) {
		return new RateLimitExpressions(beanFactory);
	}

	/**
	 * Waits on the system clock; asynchronous calls continue on the application's task
	 * executor when there is one (Spring Boot's {@code applicationTaskExecutor}), else on
	 * the common fork-join pool. Define a {@link Waiter} bean to choose another executor
	 * or clock.
	 */
	@Bean
	@ConditionalOnMissingBean
	Waiter rateLimitWaiter(
			@Qualifier(TaskExecutionAutoConfiguration.APPLICATION_TASK_EXECUTOR_BEAN_NAME) ObjectProvider<Executor> applicationTaskExecutor) {
		return Waiter.system(applicationTaskExecutor.getIfAvailable(ForkJoinPool::commonPool));
	}

	@Bean
	@ConditionalOnMissingBean
	Acquirer rateLimitAcquirer(RateLimitStore rateLimitStore, Waiter rateLimitWaiter,
			ObjectProvider<RateLimitObserver> observers, ObjectProvider<DecisionTracer> tracer) {
		return Acquirer.builder(rateLimitStore)
			.waiter(rateLimitWaiter)
			.observers(observers.orderedStream().toList())
			.tracer(tracer.getIfUnique())
			.build();
	}

	/**
	 * Reads a key's state without taking a permit, for the actuator endpoint and the
	 * status endpoint alike.
	 */
	@Bean
	@ConditionalOnMissingBean
	KeyStateReader rateLimitKeyStateReader(RateLimitStore rateLimitStore) {
		return new KeyStateReader(rateLimitStore);
	}

	@Bean
	@ConditionalOnMissingBean
	StoreStatusSource rateLimitStoreStatus(RateLimitStore rateLimitStore, RateLimitProperties properties) {
		if (rateLimitStore instanceof StoreStatusSource source) {
			return source;
		}
		StoreStatus status = new StoreStatus(rateLimitStore.name(), properties.getFailureMode(), false, 0);
		return () -> status;
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitStartupSummary rateLimitStartupSummary(ApplicationContext applicationContext,
			RateLimitProperties properties, BucketRegistry registry, RateLimitStore rateLimitStore,
			ObjectProvider<StoreTarget> storeTarget, ObjectProvider<EvictionPolicySource> evictionPolicy) {
		return new RateLimitStartupSummary(applicationContext, properties, registry, rateLimitStore,
				storeTarget.getIfUnique(), evictionPolicy.getIfUnique());
	}

	@Bean
	@ConditionalOnMissingBean
	UnknownPropertiesWarning rateLimitUnknownPropertiesWarning(Environment environment) {
		return new UnknownPropertiesWarning(environment);
	}

	@Bean
	@ConditionalOnMissingBean
	UnservedFilterRulesWarning rateLimitUnservedFilterRulesWarning(RateLimitProperties properties,
			ListableBeanFactory beanFactory) {
		return new UnservedFilterRulesWarning(properties, beanFactory);
	}

	/**
	 * Works out {@code #clientIp} from {@code ratelimit.client-ip}, for the filter rules
	 * of both web stacks, {@code @RateLimited} and the gateway alike.
	 */
	@Bean
	@ConditionalOnMissingBean
	ClientIpResolver rateLimitClientIpResolver(RateLimitProperties properties) {
		RateLimitProperties.ClientIp clientIp = properties.getClientIp();
		return new ClientIpResolver(clientIp.getTrustedProxies().stream().map(AddressRange::parse).toList(),
				clientIp.getTrustedHops(), clientIp.getHeader());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	LeaseRenewer rateLimitLeaseRenewer() {
		return new LeaseRenewer();
	}

	/**
	 * The concurrency limiters, on the store's Redis when it has one (a permit is one
	 * script call there too), else in this JVM; while Redis fails they follow
	 * {@code ratelimit.failure-mode}: {@code fallback} counts the instance's share of the
	 * permits in this JVM, {@code open} allows, {@code closed} answers 503.
	 */
	@Bean
	@ConditionalOnMissingBean
	ConcurrencyLimiters rateLimitConcurrencyLimiters(RateLimitStore rateLimitStore,
			ObjectProvider<ConcurrencyStore> concurrencyStore, LeaseRenewer rateLimitLeaseRenewer,
			ObjectProvider<ConcurrencyObserver> observers, RateLimitProperties properties) {
		ConcurrencyStore store = concurrencyStore.getIfAvailable(() -> {
			RateLimitStore target = (rateLimitStore instanceof FailoverRateLimitStore failover) ? failover.primary()
					: rateLimitStore;
			return (target instanceof ConcurrencyStore shared) ? shared : new InMemoryConcurrencyStore();
		});
		Map<String, ConcurrencyLimiters.Settings> configured = new LinkedHashMap<>();
		properties.getConcurrency()
			.forEach((bucket, settings) -> configured.put(bucket,
					new ConcurrencyLimiters.Settings(settings.getPermits(), settings.getLease())));
		OnStoreFailure onStoreFailure = switch (properties.getFailureMode()) {
			case OPEN -> OnStoreFailure.ALLOW;
			case CLOSED -> OnStoreFailure.REJECT;
			default -> OnStoreFailure.LOCAL;
		};
		// While Redis fails, each instance counts its share of the permits, as it does of
		// a rate limit.
		IntSupplier instances = (rateLimitStore instanceof FailoverRateLimitStore failover) ? failover::instances
				: () -> 1;
		return new ConcurrencyLimiters(store, rateLimitLeaseRenewer, observers.orderedStream().toList(), configured,
				onStoreFailure, instances);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiters rateLimiters(BucketRegistry registry, Acquirer rateLimitAcquirer) {
		return new RateLimiters(registry, rateLimitAcquirer);
	}

}
