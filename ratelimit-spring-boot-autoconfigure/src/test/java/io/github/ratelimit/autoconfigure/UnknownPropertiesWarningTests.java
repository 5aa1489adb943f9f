package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link UnknownPropertiesWarning}: every setting, through lists, maps and
 * relaxed names, is known; a misspelt one is named with what it likely meant.
 */
class UnknownPropertiesWarningTests {

	@Test
	void settingsThroughListsMapsAndRelaxedNamesAreKnown() {
		MockEnvironment environment = new MockEnvironment().withProperty("ratelimit.enabled", "true")
			.withProperty("ratelimit.store", "memory")
			.withProperty("ratelimit.filter.rules[0].concurrency", "2")
			.withProperty("ratelimit.filter.rules[0].concurrency-lease", "10s")
			.withProperty("ratelimit.filter.rules[0].concurrencyLease", "10s")
			.withProperty("ratelimit.filter.rules[0].paths[0]", "/api/**")
			.withProperty("ratelimit.filter.rules[1].methods", "GET,POST")
			.withProperty("ratelimit.filter.rules[1].limit", "5")
			.withProperty("ratelimit.buckets.api.limit", "10")
			.withProperty("ratelimit.buckets.api.limits[0].window", "1m")
			.withProperty("ratelimit.buckets[odd.name].window", "1m")
			.withProperty("ratelimit.concurrency.exports.permits", "5")
			.withProperty("ratelimit.client-ip.trusted-proxies[0]", "10.0.0.0/8")
			.withProperty("ratelimit.redis.timeout", "100ms")
			.withProperty("RATELIMIT_FAILURE_MODE", "open");
		assertThat(new UnknownPropertiesWarning(environment).messages()).isEmpty();
	}

	@Test
	void aMisspeltSettingIsNamedWithWhatItLikelyMeant() {
		MockEnvironment environment = new MockEnvironment().withProperty("ratelimit.filter.rules[0].concurrent", "2")
			.withProperty("ratelimit.buckets.api.windw", "1m")
			.withProperty("ratelimit.nonsense", "x");
		assertThat(new UnknownPropertiesWarning(environment).messages()).containsExactly(
				"Unknown property ratelimit.buckets.api.windw ignored: Bucket has no setting 'windw'; did you mean"
						+ " ratelimit.buckets.api.window? (docs/configuration.md lists every setting)",
				"Unknown property ratelimit.filter.rules[0].concurrent ignored: Rule has no setting 'concurrent'; did"
						+ " you mean ratelimit.filter.rules[0].concurrency? (docs/configuration.md lists every setting)",
				"Unknown property ratelimit.nonsense ignored: RateLimitProperties has no setting 'nonsense'"
						+ " (docs/configuration.md lists every setting)");
	}

	@Test
	void theWarningIsAnAutoConfiguredBean() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(UnknownPropertiesWarning.class));
	}

}
