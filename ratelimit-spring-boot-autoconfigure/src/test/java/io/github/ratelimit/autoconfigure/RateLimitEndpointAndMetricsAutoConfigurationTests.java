package io.github.ratelimit.autoconfigure;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.actuate.RateLimitsEndpoint.BucketDescriptor;
import io.github.ratelimit.actuate.RateLimitsEndpoint.KeyDescriptor;
import io.github.ratelimit.actuate.RateLimitsEndpoint.RateLimitsDescriptor;
import io.github.ratelimit.metrics.RateLimitMetrics;
import io.github.ratelimit.spring.BucketDefinition;
import io.github.ratelimit.spring.BucketRegistry;
import io.github.ratelimit.spring.RateLimitService;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} endpoint and the Micrometer meters, through their
 * auto-configuration.
 */
class RateLimitEndpointAndMetricsAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitEndpointAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class))
		.withPropertyValues("ratelimit.buckets.login.algorithm=sliding-log", "ratelimit.buckets.login.limit=2",
				"ratelimit.buckets.login.window=1m", "ratelimit.buckets.search.limit=1",
				"ratelimit.buckets.search.mode=shadow");

	private final ApplicationContextRunner exposed = this.runner
		.withPropertyValues("management.endpoints.web.exposure.include=ratelimits");

	private final ApplicationContextRunner withMetrics = this.runner
		.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class));

	@Test
	void theEndpointExistsOnlyWhereTheUserExposesIt() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
		this.exposed.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class));
	}

	@Test
	void withoutActuatorThereIsNoEndpoint() {
		this.exposed.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitService.class)
				.doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void theEndpointListsBucketsWithLimitsSourceAndCounts() {
		this.exposed.run((context) -> {
			RateLimitService service = context.getBean(RateLimitService.class);
			BucketDefinition login = context.getBean(BucketRegistry.class).find("login");
			for (int i = 0; i < 3; i++) {
				service.decide(login, "alice", login.limits(), 1, Long.MAX_VALUE);
			}
			RateLimitsDescriptor descriptor = context.getBean(RateLimitsEndpoint.class).rateLimits();
			assertThat(descriptor.store().name()).isEqualTo("memory");
			assertThat(descriptor.store().failureMode()).isEqualTo("fallback");
			assertThat(descriptor.store().state()).isEqualTo("healthy");
			BucketDescriptor bucket = descriptor.buckets()
				.stream()
				.filter((b) -> b.name().equals("login"))
				.findFirst()
				.orElseThrow();
			assertThat(bucket.source()).isEqualTo("configuration");
			assertThat(bucket.mode()).isEqualTo("enforce");
			assertThat(bucket.limits()).singleElement().satisfies((limit) -> {
				assertThat(limit.algorithm()).isEqualTo("sliding-log");
				assertThat(limit.limit()).isEqualTo(2);
				assertThat(limit.window()).isEqualTo("1m");
			});
			assertThat(bucket.allowed()).isEqualTo(2);
			assertThat(bucket.rejected()).isEqualTo(1);
			assertThat(descriptor.buckets()).extracting(BucketDescriptor::name).contains("search");
		});
	}

	@Test
	void readingAKeyDoesNotConsumeAndDeleteResetsIt() {
		this.exposed.run((context) -> {
			RateLimitService service = context.getBean(RateLimitService.class);
			BucketDefinition login = context.getBean(BucketRegistry.class).find("login");
			service.decide(login, "bob", login.limits(), 2, Long.MAX_VALUE);
			RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
			for (int i = 0; i < 3; i++) {
				KeyDescriptor state = endpoint.key("login", "bob");
				assertThat(state.allowed()).isFalse();
				assertThat(state.remaining()).isZero();
				assertThat(state.retryAfterMillis()).isBetween(59_000L, 60_000L);
			}
			assertThat(endpoint.reset("login", "bob")).isTrue();
			assertThat(endpoint.key("login", "bob").remaining()).isEqualTo(2);
			assertThat(endpoint.key("nope", "bob")).isNull();
			assertThat(endpoint.reset("nope", "bob")).isNull();
		});
	}

	@Test
	void decisionsAreCountedByBucketAndOutcomeWithoutTheKey() {
		this.withMetrics.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitMetrics.class);
			RateLimitService service = context.getBean(RateLimitService.class);
			BucketRegistry registry = context.getBean(BucketRegistry.class);
			BucketDefinition login = registry.find("login");
			BucketDefinition search = registry.find("search");
			for (int i = 0; i < 3; i++) {
				service.decide(login, "user-" + (i % 1), login.limits(), 1, Long.MAX_VALUE);
				service.decide(search, "ip", search.limits(), 1, Long.MAX_VALUE);
			}
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(
					meters.get("ratelimit.decisions").tags("bucket", "login", "outcome", "allowed").counter().count())
				.isEqualTo(2);
			assertThat(
					meters.get("ratelimit.decisions").tags("bucket", "login", "outcome", "rejected").counter().count())
				.isEqualTo(1);
			assertThat(meters.get("ratelimit.decisions")
				.tags("bucket", "search", "outcome", "shadow_rejected")
				.counter()
				.count()).isEqualTo(2);
			assertThat(meters.get("ratelimit.store.latency").tags("store", "memory").timer().count()).isEqualTo(6);
			assertThat(meters.get("ratelimit.store.degraded").tags("store", "memory").gauge().value()).isZero();
			assertThat(meters.find("ratelimit.decisions").meters())
				.allSatisfy((meter) -> assertThat(meter.getId().getTags().stream().map((tag) -> tag.getKey()).toList())
					.containsExactlyInAnyOrderElementsOf(List.of("bucket", "outcome")));
		});
	}

	@Test
	void withoutAMeterRegistryThereAreNoMetrics() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(RateLimitMetrics.class));
	}

}
