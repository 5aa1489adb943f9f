package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.LimitSpec;

import java.time.ZoneId;

import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.Reservation;
import io.github.ratelimit.acquire.Waiter;
import io.github.ratelimit.actuate.RateLimitStatistics;
import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.actuate.RateLimitsEndpoint.BucketDescriptor;
import io.github.ratelimit.actuate.RateLimitsEndpoint.KeyDescriptor;
import io.github.ratelimit.actuate.RateLimitsEndpoint.RateLimitsDescriptor;
import io.github.ratelimit.actuate.RateLimitsEndpoint.SettlementsDescriptor;
import io.github.ratelimit.actuate.UnknownFieldsAdvisor;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.RateLimiters;
import io.github.ratelimit.metrics.RateLimitMetrics;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

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
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class)
			.doesNotHaveBean(UnknownFieldsAdvisor.class));
		this.exposed.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
			.hasSingleBean(UnknownFieldsAdvisor.class));
	}

	@Test
	void withoutActuatorThereIsNoEndpoint() {
		this.exposed.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
			.run((context) -> assertThat(context).hasSingleBean(Acquirer.class)
				.doesNotHaveBean(RateLimitsEndpoint.class)
				.doesNotHaveBean(RateLimitStatistics.class));
	}

	@Test
	void theEndpointListsBucketsWithLimitsSourceAndCounts() {
		this.exposed.run((context) -> {
			Acquirer acquirer = context.getBean(Acquirer.class);
			BucketDefinition login = context.getBean(BucketRegistry.class).find("login");
			for (int i = 0; i < 3; i++) {
				acquirer.tryAcquire(PermitRequest.of(login.bucket(), "alice", 1));
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
			assertThat(bucket.waited()).isZero();
			assertThat(bucket.rejected()).isEqualTo(1);
			assertThat(descriptor.buckets()).extracting(BucketDescriptor::name).contains("search");
		});
	}

	@Test
	void aKeyWhoseZoneIsSetPerCallIsReadAndResetInThatZone() {
		this.exposed
			.withPropertyValues("ratelimit.buckets.quota.limit=100", "ratelimit.buckets.quota.calendar=month",
					"ratelimit.buckets.quota.algorithm=fixed-window")
			.run((context) -> {
				BucketDefinition quota = context.getBean(BucketRegistry.class).find("quota");
				List<LimitSpec> tokyo = quota.limitsIn(quota.limits(), ZoneId.of("Asia/Tokyo"));
				assertThat(context.getBean(RateLimitStore.class).decide("quota", "k", tokyo, 30).allowed()).isTrue();
				RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
				assertThat(endpoint.key("quota", "k", null, null).remaining()).as("in UTC").isEqualTo(100);
				KeyDescriptor inTokyo = endpoint.key("quota", "k", null, "Asia/Tokyo");
				assertThat(inTokyo.remaining()).isEqualTo(70);
				assertThat(inTokyo.limits().get(0).limit().zone()).isEqualTo("Asia/Tokyo");
				assertThat(endpoint.reset("quota", "k", "Asia/Tokyo")).isTrue();
				assertThat(endpoint.key("quota", "k", null, "Asia/Tokyo").remaining()).isEqualTo(100);
				assertThat(endpoint.key("quota", "k", null, "Etc/UTC").limits().get(0).limit().zone())
					.as("every name of UTC is the bucket's own zone")
					.isEqualTo("UTC");
				assertThatExceptionOfType(InvalidEndpointRequestException.class)
					.isThrownBy(() -> endpoint.key("login", "bob", null, "Asia/Tokyo"))
					.withMessage("Bucket 'login' has no calendar window; read or reset it without 'zone'");
				assertThatExceptionOfType(InvalidEndpointRequestException.class)
					.isThrownBy(() -> endpoint.reset("quota", "k", "Mars/Base"))
					.withMessageStartingWith("'Mars/Base' is not a time zone");
			});
	}

	@Test
	void readingAKeyDoesNotConsumeAndDeleteResetsIt() {
		this.exposed.run((context) -> {
			Acquirer acquirer = context.getBean(Acquirer.class);
			BucketDefinition login = context.getBean(BucketRegistry.class).find("login");
			acquirer.tryAcquire(PermitRequest.of(login.bucket(), "bob", 2));
			RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
			for (int i = 0; i < 3; i++) {
				KeyDescriptor state = endpoint.key("login", "bob", null, null);
				assertThat(state.allowed()).isFalse();
				assertThat(state.remaining()).isZero();
				assertThat(state.retryAfterMillis()).isBetween(59_000L, 60_000L);
			}
			assertThat(endpoint.reset("login", "bob", null)).isTrue();
			assertThat(endpoint.key("login", "bob", null, null).remaining()).isEqualTo(2);
			assertThat(endpoint.key("nope", "bob", null, null)).isNull();
			assertThat(endpoint.reset("nope", "bob", null)).isNull();
		});
	}

	@Test
	void aBucketWithAPerCallLimitIsShownAsSuchAndReadWithTheLimitGiven() {
		this.exposed.withConfiguration(AutoConfigurations.of(RateLimitAopAutoConfiguration.class))
			.withBean(Reports.class)
			.run((context) -> {
				Reports reports = context.getBean(Reports.class);
				reports.fetch("free");
				reports.fetch("free");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> reports.fetch("free"));
				RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
				BucketDescriptor bucket = endpoint.rateLimits()
					.buckets()
					.stream()
					.filter((b) -> b.name().equals("reports"))
					.findFirst()
					.orElseThrow();
				assertThat(bucket.limitPerCall()).isEqualTo(Reports.PLAN);
				assertThat(bucket.limits()).singleElement().satisfies((limit) -> {
					assertThat(limit.limit()).as("set per call, not the default 100").isNull();
					assertThat(limit.burst()).isNull();
					assertThat(limit.window()).isEqualTo("1m");
				});
				assertThat(bucket.allowed()).isEqualTo(2);
				assertThat(bucket.rejected()).isEqualTo(1);
				KeyDescriptor unread = endpoint.key("reports", "free", null, null);
				assertThat(unread.limitPerCall()).isEqualTo(Reports.PLAN);
				assertThat(unread.allowed()).isNull();
				assertThat(unread.remaining()).isNull();
				assertThat(unread.limits()).isEmpty();
				KeyDescriptor free = endpoint.key("reports", "free", 2L, null);
				assertThat(free.allowed()).isFalse();
				assertThat(free.remaining()).isZero();
				assertThat(free.limits()).singleElement()
					.satisfies((limit) -> assertThat(limit.limit().limit()).isEqualTo(2));
				reports.fetch("premium");
				reports.fetch("premium");
				KeyDescriptor premium = endpoint.key("reports", "premium", 5L, null);
				assertThat(premium.allowed()).isTrue();
				assertThat(premium.remaining()).isEqualTo(3);
				assertThatExceptionOfType(InvalidEndpointRequestException.class)
					.isThrownBy(() -> endpoint.key("reports", "free", 0L, null));
				assertThatExceptionOfType(InvalidEndpointRequestException.class)
					.isThrownBy(() -> endpoint.key("login", "bob", 3L, null))
					.withMessageContaining("same limits for every call");
			});
	}

	@Test
	void aConfiguredLimitReplacesThePerCallLimitInTheEndpoint() {
		this.exposed.withConfiguration(AutoConfigurations.of(RateLimitAopAutoConfiguration.class))
			.withBean(Reports.class)
			.withPropertyValues("ratelimit.buckets.reports.limit=7")
			.run((context) -> {
				context.getBean(Reports.class).fetch("free");
				RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
				assertThat(endpoint.rateLimits().buckets()).filteredOn((b) -> b.name().equals("reports"))
					.singleElement()
					.satisfies((bucket) -> {
						assertThat(bucket.limitPerCall()).isNull();
						assertThat(bucket.limits().get(0).limit()).isEqualTo(7);
					});
				assertThat(endpoint.key("reports", "free", null, null).remaining()).isEqualTo(6);
			});
	}

	@Test
	void decisionsAreCountedByBucketAndOutcomeWithoutTheKey() {
		this.withMetrics.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitMetrics.class);
			Acquirer acquirer = context.getBean(Acquirer.class);
			BucketRegistry registry = context.getBean(BucketRegistry.class);
			BucketDefinition login = registry.find("login");
			BucketDefinition search = registry.find("search");
			for (int i = 0; i < 3; i++) {
				acquirer.tryAcquire(PermitRequest.of(login.bucket(), "user-" + (i % 1), 1));
				acquirer.tryAcquire(PermitRequest.of(search.bucket(), "ip", 1));
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
	void settledReservationsDebtsAndPenaltiesAreCountedByTheEndpointAndTheMetrics() {
		this.exposed
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
			.withPropertyValues("ratelimit.buckets.tokens.limit=1000", "ratelimit.buckets.tokens.window=1m",
					"ratelimit.buckets.login.limit=1", "ratelimit.buckets.login.window=1m",
					"ratelimit.buckets.login.penalty=5m")
			.run((context) -> {
				RateLimiter tokens = context.getBean(RateLimiters.class).get("tokens");
				tokens.reserve("key", 100).settle(30);
				tokens.reserve("key", 100).settle(250);
				Reservation cancelled = tokens.reserve("key", 100);
				assertThat(cancelled.cancel()).isTrue();
				assertThat(cancelled.settle(500)).as("a reservation settles once").isFalse();
				// 1000 - 280 - 100 = 620 left: 800 more than reserved owes 180.
				tokens.reserve("key", 100).settle(900);
				RateLimiter login = context.getBean(RateLimiters.class).get("login");
				assertThat(login.tryAcquire("ip").decision().allowed()).isTrue();
				assertThat(login.tryAcquire("ip").decision().penaltyStarted()).isTrue();
				assertThat(login.tryAcquire("ip").decision().penaltyStarted()).as("blocked").isFalse();
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("ratelimit.permits.reserved").tags("bucket", "tokens").counter().count())
					.isEqualTo(400);
				assertThat(meters.get("ratelimit.permits.used").tags("bucket", "tokens").counter().count())
					.isEqualTo(1180);
				assertThat(meters.get("ratelimit.permits.excess").tags("bucket", "tokens").counter().count())
					.isEqualTo(950);
				assertThat(meters.get("ratelimit.permits.owed").tags("bucket", "tokens").counter().count())
					.isEqualTo(180);
				assertThat(meters.get("ratelimit.penalties").tags("bucket", "login").counter().count()).isEqualTo(1);
				assertThat(meters.find("ratelimit.penalties").tags("bucket", "tokens").counter()).isNull();
				RateLimitsDescriptor all = context.getBean(RateLimitsEndpoint.class).rateLimits();
				BucketDescriptor bucket = all.buckets()
					.stream()
					.filter((b) -> b.name().equals("tokens"))
					.findFirst()
					.orElseThrow();
				assertThat(bucket.settled()).isEqualTo(new SettlementsDescriptor(4, 400, 1180, 950, 180));
				assertThat(bucket.penaltiesStarted()).isZero();
				assertThat(tokens.peek("key").allowed()).as("in debt").isFalse();
				assertThat(all.buckets().stream().filter((b) -> b.name().equals("login")).findFirst().orElseThrow())
					.satisfies((b) -> {
						assertThat(b.penaltiesStarted()).isEqualTo(1);
						assertThat(b.rejected()).isEqualTo(2);
					});
			});
	}

	@Test
	void callsThatWaitedAreCountedAsWaitedByTheDirectApiTheEndpointAndTheMetrics() {
		ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
		this.exposed
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
			.withBean(RateLimitStore.class,
					() -> InMemoryRateLimitStore.builder().timeSource(time).executor(Runnable::run).build())
			.withBean(Waiter.class, () -> new ManualWaiter(time))
			.withPropertyValues("ratelimit.buckets.partner.algorithm=token-bucket", "ratelimit.buckets.partner.limit=1",
					"ratelimit.buckets.partner.window=1s")
			.run((context) -> {
				RateLimiters limiters = context.getBean(RateLimiters.class);
				limiters.get("partner").acquire("", Duration.ofSeconds(5));
				limiters.get("partner").acquire("", Duration.ofSeconds(5));
				BucketDescriptor partner = context.getBean(RateLimitsEndpoint.class)
					.rateLimits()
					.buckets()
					.stream()
					.filter((b) -> b.name().equals("partner"))
					.findFirst()
					.orElseThrow();
				assertThat(partner.allowed()).isEqualTo(1);
				assertThat(partner.waited()).as("the second call waited, then went through").isEqualTo(1);
				assertThat(partner.rejected()).isZero();
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("ratelimit.decisions")
					.tags("bucket", "partner", "outcome", "waited")
					.counter()
					.count()).isEqualTo(1);
				assertThat(meters.get("ratelimit.decisions")
					.tags("bucket", "partner", "outcome", "rejected")
					.counter()
					.count()).isZero();
			});
	}

	@Test
	void withoutAMeterRegistryThereAreNoMetrics() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(RateLimitMetrics.class));
	}

	static class Reports {

		static final String PLAN = "#apiKey == 'premium' ? 5 : 2";

		@RateLimited(bucket = "reports", key = "#apiKey", limitExpression = PLAN, window = "1m",
				algorithm = Algorithm.GCRA)
		public String fetch(String apiKey) {
			return "report";
		}

	}

}
