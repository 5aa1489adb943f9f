package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.Objects;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.DecisionTracer;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.observation.DefaultRateLimitObservationConvention;
import io.github.ratelimit.observation.RateLimitObservationConvention;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The observations of decisions through their auto-configuration: on with an
 * {@link ObservationRegistry}, off without one, without Micrometer Observation on the
 * class path or by property; the near-limit counter through the metrics'.
 */
class RateLimitObservationAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitObservationAutoConfiguration.class))
		.withPropertyValues("ratelimit.buckets.login.limit=2", "ratelimit.buckets.login.window=1m");

	private final ApplicationContextRunner withRegistry = this.runner.withBean(TestObservationRegistry.class,
			TestObservationRegistry::create);

	@Test
	void withAnObservationRegistryEachDecisionIsObserved() {
		this.withRegistry.run((context) -> {
			assertThat(context).hasSingleBean(DecisionTracer.class);
			decide(context.getBean(Acquirer.class), context.getBean(BucketRegistry.class));
			assertThat(context.getBean(TestObservationRegistry.class))
				.hasObservationWithNameEqualTo("ratelimit.decision")
				.that()
				.hasContextualNameEqualTo("ratelimit login")
				.hasLowCardinalityKeyValue("bucket", "login")
				.hasLowCardinalityKeyValue("store", "memory")
				.doesNotHaveHighCardinalityKeyValueWithKey("key");
		});
	}

	@Test
	void withBootsObservationAutoConfigurationTheDecisionIsObserved() {
		this.runner.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(ObservationRegistry.class)
				.hasSingleBean(DecisionTracer.class));
	}

	@Test
	void theKeyIsObservedWhenTheUserOptsIn() {
		this.withRegistry.withPropertyValues("ratelimit.observations.include-key=true").run((context) -> {
			decide(context.getBean(Acquirer.class), context.getBean(BucketRegistry.class));
			assertThat(context.getBean(TestObservationRegistry.class))
				.hasObservationWithNameEqualTo("ratelimit.decision")
				.that()
				.hasHighCardinalityKeyValue("key", "alice");
		});
	}

	@Test
	void aConventionBeanReplacesTheDefault() {
		this.withRegistry
			.withBean(RateLimitObservationConvention.class, () -> new DefaultRateLimitObservationConvention() {

				@Override
				public String getName() {
					return "limits.decided";
				}

			})
			.run((context) -> {
				decide(context.getBean(Acquirer.class), context.getBean(BucketRegistry.class));
				assertThat(context.getBean(TestObservationRegistry.class))
					.hasObservationWithNameEqualTo("limits.decided");
			});
	}

	@Test
	void withoutAnObservationRegistryThereIsNoTracer() {
		this.runner
			.run((context) -> assertThat(context).hasSingleBean(Acquirer.class).doesNotHaveBean(DecisionTracer.class));
	}

	@Test
	void whenTurnedOffThereIsNoTracer() {
		this.withRegistry.withPropertyValues("ratelimit.observations.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(Acquirer.class).doesNotHaveBean(DecisionTracer.class));
	}

	@Test
	void withoutMicrometerObservationOnTheClassPathTheApplicationStarts() {
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer.observation"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(Acquirer.class)
				.doesNotHaveBean(DecisionTracer.class));
	}

	@Test
	void allowedRequestsNearTheLimitAreCounted() {
		this.runner
			.withConfiguration(
					AutoConfigurations.of(RateLimitMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
							CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
			.withPropertyValues("ratelimit.buckets.login.limit=10", "ratelimit.metrics.near-limit-share=0.3")
			.run((context) -> {
				Acquirer acquirer = context.getBean(Acquirer.class);
				BucketRegistry buckets = context.getBean(BucketRegistry.class);
				for (int i = 0; i < 11; i++) {
					acquirer.tryAcquire(PermitRequest.of(login(buckets), "alice", 1));
				}
				// Remaining 2, 1 and 0 are below 30% of 10; the eleventh is rejected.
				assertThat(context.getBean(MeterRegistry.class)
					.get("ratelimit.decisions.near.limit")
					.tag("bucket", "login")
					.counter()
					.count()).isEqualTo(3);
			});
	}

	@Test
	void aNearLimitShareOutsideZeroToOneFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("ratelimit.metrics.near-limit-share=10")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("metrics.near-limit-share"));
	}

	private static void decide(Acquirer acquirer, BucketRegistry buckets) {
		acquirer.acquire(List.of(PermitRequest.of(login(buckets), "alice", 1)));
	}

	private static Bucket login(BucketRegistry buckets) {
		return Objects.requireNonNull(buckets.find("login"), "bucket 'login' is configured").bucket();
	}

}
