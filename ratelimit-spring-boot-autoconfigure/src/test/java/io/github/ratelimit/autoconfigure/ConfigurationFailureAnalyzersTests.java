package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.util.Arrays;
import java.util.Properties;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.support.PropertiesLoaderUtils;

import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every family of configuration error the starter raises reaches Spring Boot's failure
 * analysis, found in the cause chain of a failed startup, with a Description naming the
 * property or the method and an Action saying how to fix it.
 */
class ConfigurationFailureAnalyzersTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class));

	private final WebApplicationContextRunner web = new WebApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class));

	@Test
	void everyAnalyzerIsRegistered() throws IOException {
		Properties factories = PropertiesLoaderUtils.loadProperties(new ClassPathResource("META-INF/spring.factories"));
		assertThat(Arrays.stream(factories.getProperty(FailureAnalyzer.class.getName()).split(","))
			.map(String::trim)
			.toList()).containsExactlyInAnyOrder(RedisStoreMissingFailureAnalyzer.class.getName(),
					RedisStoreUnavailableFailureAnalyzer.class.getName(), RedisTopologyFailureAnalyzer.class.getName(),
					InvalidRateLimitConfigurationFailureAnalyzer.class.getName());
	}

	@Test
	void aBucketPropertyIsReportedWithThePropertyAndTheFix() {
		FailureAnalysis analysis = analyze(
				this.runner.withPropertyValues("ratelimit.buckets.login.limit=5", "ratelimit.buckets.login.window=0s"),
				new InvalidRateLimitConfigurationFailureAnalyzer());
		assertThat(analysis.getDescription()).isEqualTo("ratelimit.buckets.login.window: must be positive but was 0ms");
		assertThat(analysis.getAction()).isEqualTo("Set ratelimit.buckets.login.window to a value that is positive, "
				+ "e.g. ratelimit.buckets.login.window=1m, or remove it to use ratelimit.defaults.window.");
	}

	@Test
	void twoDefinitionsOfABucketAreReportedWithBothPlaces() {
		FailureAnalysis analysis = analyze(this.runner.withBean(TwoLimits.class),
				new InvalidRateLimitConfigurationFailureAnalyzer());
		assertThat(analysis.getDescription()).startsWith("Bucket 'shared' is defined twice with different limits")
			.contains("TwoLimits.first()")
			.contains("TwoLimits.second()");
		assertThat(analysis.getAction()).contains("another bucket name").contains("ratelimit.buckets.shared");
	}

	@Test
	void aFilterRuleKeyReadingWhatTheRequestDoesNotOfferIsReportedWithASuggestion() {
		FailureAnalysis analysis = analyze(
				this.web.withPropertyValues("ratelimit.filter.rules[0].paths=/api/**",
						"ratelimit.filter.rules[0].key=#request.remoteAdr"),
				new InvalidRateLimitConfigurationFailureAnalyzer());
		assertThat(analysis.getDescription())
			.isEqualTo("ratelimit.filter.rules[0].key '#request.remoteAdr': HttpServletRequest has no property "
					+ "'remoteAdr'; did you mean '#request.remoteAddr'?");
		assertThat(analysis.getAction()).isEqualTo(
				"Change ratelimit.filter.rules[0].key to read what HttpServletRequest offers, e.g. #request.remoteAddr.");
	}

	@Test
	void aFilterRuleMethodIsReportedWithTheMethodsThatExist() {
		FailureAnalysis analysis = analyze(this.web.withPropertyValues("ratelimit.filter.rules[0].methods=GETT"),
				new InvalidRateLimitConfigurationFailureAnalyzer());
		assertThat(analysis.getDescription()).startsWith("ratelimit.filter.rules[0].methods[0]: 'GETT' is not an HTTP");
		assertThat(analysis.getAction()).startsWith("Set ratelimit.filter.rules[0].methods[0] to one of GET, HEAD");
	}

	@Test
	void anAnnotationAttributeIsReportedWithTheMethodAndTheFix() {
		FailureAnalysis analysis = analyze(this.runner.withBean(WaitsForever.class),
				new InvalidRateLimitConfigurationFailureAnalyzer());
		assertThat(analysis.getDescription())
			.isEqualTo("@RateLimited(onLimit) on ConfigurationFailureAnalyzersTests.WaitsForever.call(): WAIT needs "
					+ "maxWait, the longest a call may wait for a permit (e.g. maxWait = \"2s\")");
		assertThat(analysis.getAction()).isEqualTo("Add maxWait (e.g. maxWait = \"2s\") to the @RateLimited on "
				+ "ConfigurationFailureAnalyzersTests.WaitsForever.call(), or use onLimit = REJECT.");
	}

	@Test
	void anAnnotationExpressionIsReportedWithTheMethodAndTheExpression() {
		FailureAnalysis analysis = analyze(this.runner.withBean(BadKey.class),
				new InvalidRateLimitConfigurationFailureAnalyzer());
		assertThat(analysis.getDescription())
			.startsWith("Invalid SpEL in @RateLimited(key) on ConfigurationFailureAnalyzersTests.BadKey.login(String): "
					+ "'#username.('");
		assertThat(analysis.getAction())
			.startsWith("Correct the expression of @RateLimited(key) on ConfigurationFailureAnalyzersTests.BadKey"
					+ ".login(String): SpEL that sees the method's arguments by name");
	}

	@Test
	void aFilterRuleExpressionIsReportedWithTheProperty() {
		FailureAnalysis analysis = analyze(this.web.withPropertyValues("ratelimit.filter.rules[0].cost=#request.("),
				new InvalidRateLimitConfigurationFailureAnalyzer());
		assertThat(analysis.getDescription())
			.startsWith("Invalid SpEL in ratelimit.filter.rules[0].cost: '#request.('");
		assertThat(analysis.getAction())
			.startsWith("Correct ratelimit.filter.rules[0].cost: SpEL that sees the request");
	}

	private static FailureAnalysis analyze(AbstractApplicationContextRunner<?, ?, ?> runner, FailureAnalyzer analyzer) {
		FailureAnalysis[] analysis = new FailureAnalysis[1];
		runner.run((context) -> {
			assertThat(context).hasFailed();
			analysis[0] = analyzer.analyze(context.getStartupFailure());
		});
		assertThat(analysis[0]).as("analysis").isNotNull();
		return analysis[0];
	}

	static class TwoLimits {

		@RateLimited(bucket = "shared", limit = 5, window = "1m")
		public void first() {
		}

		@RateLimited(bucket = "shared", limit = 6, window = "1m")
		public void second() {
		}

	}

	static class WaitsForever {

		@RateLimited(limit = 5, window = "1m", onLimit = OnLimit.WAIT)
		public void call() {
		}

	}

	static class BadKey {

		@RateLimited(key = "#username.(", limit = 5, window = "1m")
		public boolean login(String username) {
			return true;
		}

	}

}
