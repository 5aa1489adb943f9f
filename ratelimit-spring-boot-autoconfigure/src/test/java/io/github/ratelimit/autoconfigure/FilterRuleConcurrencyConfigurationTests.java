package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.servlet.RateLimitFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@code concurrency} on a filter rule is configured: what it limits alone and beside
 * a rate limit, what overrides it, and what startup refuses, naming the rule's property.
 */
class FilterRuleConcurrencyConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class))
		.withPropertyValues("ratelimit.filter.rules[0].bucket=exports", "ratelimit.filter.rules[0].key=#clientIp");

	@Test
	void aRuleWithOnlyConcurrencyLimitsOnlyRequestsInFlightEvenWithDefaultLimits() {
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].concurrency=3", "ratelimit.defaults.limit=100",
					"ratelimit.defaults.window=1m")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				FilterRule rule = rule(context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class));
				assertThat(rule.bucket()).isNull();
				assertThat(rule.concurrency()).isNotNull();
				assertThat(rule.concurrency().limit().permits()).isEqualTo(3);
				assertThat(context.getBean(BucketRegistry.class).find("exports")).isNull();
				assertThat(context.getBean(RateLimitStartupSummary.class).summary())
					.contains("[0] * /** -> exports by #clientIp at most 3 in flight");
			});
	}

	@Test
	void aRuleWithALimitOrABucketEntryLimitsBothAndConfigurationOverridesTheRulesConcurrency() {
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].concurrency=3", "ratelimit.buckets.exports.limit=10",
					"ratelimit.buckets.exports.window=1m", "ratelimit.concurrency.exports.permits=7",
					"ratelimit.filter.rules[0].concurrency-lease=5s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				FilterRule rule = rule(context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class));
				assertThat(rule.bucket()).isNotNull();
				assertThat(rule.bucket().limits().get(0).limit()).isEqualTo(10);
				assertThat(rule.concurrency().limit().permits()).isEqualTo(7);
				assertThat(rule.concurrency().limit().lease()).hasSeconds(5);
				assertThat(context.getBean(ConcurrencyLimiters.class).find("exports")).isSameAs(rule.concurrency());
			});
	}

	@Test
	void concurrencyOutOfRangeIsRefusedNamingTheRulesProperty() {
		this.runner.withPropertyValues("ratelimit.filter.rules[0].concurrency=0").run((context) -> {
			FailureAnalysis analysis = analyzed(context.getStartupFailure());
			assertThat(analysis.getDescription())
				.isEqualTo("ratelimit.filter.rules[0].concurrency: must be between 1 and 100000 but was 0");
			assertThat(analysis.getAction())
				.isEqualTo("Set ratelimit.filter.rules[0].concurrency within range, e.g. 10.");
		});
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].concurrency=2",
					"ratelimit.filter.rules[0].concurrency-lease=0s")
			.run((context) -> assertThat(analyzed(context.getStartupFailure()).getDescription())
				.startsWith("ratelimit.filter.rules[0].concurrency-lease: must be between 1s and 1d"));
	}

	@Test
	void aLeaseWithoutConcurrencyOrASettleWithoutARateLimitIsRefused() {
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].limit=5", "ratelimit.filter.rules[0].window=1m",
					"ratelimit.filter.rules[0].concurrency-lease=10s")
			.run((context) -> assertThat(analyzed(context.getStartupFailure()).getDescription()).isEqualTo(
					"ratelimit.filter.rules[0].concurrency-lease is set, but ratelimit.filter.rules[0].concurrency is not"));
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].concurrency=2",
					"ratelimit.filter.rules[0].settle=#header('X-Used')")
			.run((context) -> assertThat(analyzed(context.getStartupFailure()).getDescription())
				.isEqualTo("ratelimit.filter.rules[0].settle is set, but the rule has no rate limit to settle: it only"
						+ " limits requests in flight"));
	}

	@Test
	void aLeaseWithoutAUnitIsSecondsAndOneShorterThanASecondIsRefused() {
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].concurrency=2",
					"ratelimit.filter.rules[0].concurrency-lease=45")
			.run((context) -> assertThat(
					rule(context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)).concurrency()
						.limit()
						.lease())
				.hasSeconds(45));
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].concurrency=2",
					"ratelimit.filter.rules[0].concurrency-lease=10ms")
			.run((context) -> assertThat(analyzed(context.getStartupFailure()).getDescription())
				.isEqualTo("ratelimit.filter.rules[0].concurrency-lease: must be between 1s and 1d but was 10ms"
						+ " (it is renewed every third of it through the store)"));
	}

	@Test
	void aValueOutOfRangeIsNamedWhereItWasSetInConfigurationOverTheRule() {
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].concurrency=2", "ratelimit.concurrency.exports.permits=0")
			.run((context) -> {
				FailureAnalysis analysis = analyzed(context.getStartupFailure());
				assertThat(analysis.getDescription())
					.isEqualTo("ratelimit.concurrency.exports.permits: must be between 1 and 100000 but was 0");
				assertThat(analysis.getAction())
					.isEqualTo("Set ratelimit.concurrency.exports.permits within range, e.g. 10.");
			});
	}

	private static FilterRule rule(FilterRegistrationBean<?> registration) {
		return ((RateLimitFilter) registration.getFilter()).getRules().get(0);
	}

	private static FailureAnalysis analyzed(@Nullable Throwable failure) {
		assertThat(failure).as("startup failure").isNotNull();
		FailureAnalysis analysis = new InvalidRateLimitConfigurationFailureAnalyzer().analyze(failure);
		assertThat(analysis).as("failure analysis of %s", failure).isNotNull();
		return analysis;
	}

}
