package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one INFO summary at startup: store and target, failure mode, buckets with their
 * limits and where they are defined, filter rules in order, and what was skipped.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitStartupSummaryTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private final WebApplicationContextRunner web = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class,
				RateLimitWebAutoConfiguration.class))
		.withPropertyValues("ratelimit.buckets.api.limit=10", "ratelimit.buckets.api.window=10s",
				"ratelimit.buckets.api.algorithm=sliding-window-counter", "ratelimit.buckets.unused.limit=3",
				"ratelimit.filter.rules[0].bucket=api", "ratelimit.filter.rules[0].paths=/api/**",
				"ratelimit.filter.rules[0].methods=GET", "ratelimit.filter.rules[0].key=#request.remoteAddr",
				"ratelimit.filter.rules[1].paths=/upload", "ratelimit.filter.rules[1].cost=#request.contentLength",
				"ratelimit.filter.rules[1].settle=#header('X-Bytes-Kept')", "ratelimit.filter.rules[1].limit=5")
		.withBean(Services.class);

	@Test
	void theSummaryIsLoggedOnceAtInfoWithEveryBucketRuleAndSkip(CapturedOutput output) {
		this.web.run((context) -> assertThat(context.getBean(RateLimitStartupSummary.class).summary())
			.isEqualTo("Rate limiting: store in-memory (max-keys 1000000), failure mode fallback, 5 buckets, "
					+ "2 filter rules\n"
					+ "  buckets: login 5/1m sliding-log [@RateLimited on RateLimitStartupSummaryTests.Services.login(String)]; "
					+ "reports per call (#apiKey == 'premium' ? 50 : 5)/1m gcra [@RateLimited on "
					+ "RateLimitStartupSummaryTests.Services.reports(String)]; api 10/10s sliding-window-counter "
					+ "segments=10 [ratelimit.buckets.api, used by ratelimit.filter.rules[0]]; filter-1 5/1m "
					+ "token-bucket [ratelimit.filter.rules[1]]; unused 3/1m token-bucket [ratelimit.buckets.unused]\n"
					+ "  filter rules (order -110, first match): [0] GET /api/** -> api by #request.remoteAddr; "
					+ "[1] * /upload -> filter-1 shared cost #request.contentLength settle #header('X-Bytes-Kept')\n"
					+ "  skipped: ratelimit.buckets.unused is used by no annotation or filter rule (a typo, or for "
					+ "RateLimiters.get); Redis store (no RedisConnectionFactory bean)"));
		assertThat(output).containsOnlyOnce("Rate limiting: store in-memory");
		assertThat(output.toString().lines().filter((line) -> line.contains("Rate limiting:")))
			.allMatch((line) -> line.contains("INFO"));
	}

	@Test
	void withRedisTheSummaryNamesTheServerAndWithoutTheFilterItSaysWhyRulesAreSkipped(CapturedOutput output) {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"ratelimit.failure-mode=closed", "ratelimit.filter.rules[0].paths=/api/**")
			.run((context) -> assertThat(context.getBean(RateLimitStartupSummary.class).summary())
				.isEqualTo("Rate limiting: store redis://" + redis.host() + ":" + redis.port()
						+ " (maxmemory-policy noeviction), failure mode closed, 0 buckets, 0 filter rules\n"
						+ "  skipped: 1 filter rule (not a servlet or reactive web application)"));
		assertThat(output).containsOnlyOnce("Rate limiting: store redis://");
	}

	@Test
	void theSummaryListsTheConcurrencyLimits() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory", "ratelimit.concurrency.exports.permits=5",
					"ratelimit.concurrency.exports.lease=10s")
			.run((context) -> assertThat(context.getBean(RateLimitStartupSummary.class).summary())
				.contains("\n  concurrency: exports 5 in flight (lease 10s)\n"));
	}

	@Test
	void onJedisTheSummaryNamesTheServerToo() {
		// As an application that excludes Lettuce and adds Jedis, as the README says.
		new ApplicationContextRunner().withClassLoader(new FilteredClassLoader("io.lettuce"))
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.database=2")
			.run((context) -> assertThat(context.getBean(RateLimitStartupSummary.class).summary())
				.startsWith("Rate limiting: store redis://" + redis.host() + ":" + redis.port()
						+ "/2 (maxmemory-policy noeviction), "));
	}

	@Test
	void inAWebFluxApplicationTheRulesAreListedAsApplied() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory", "ratelimit.filter.rules[0].paths=/api/**",
					"ratelimit.filter.rules[0].limit=5", "ratelimit.filter.rules[0].window=1m")
			.run((context) -> {
				assertThat(context).hasBean("rateLimitWebFilter");
				assertThat(context.getBean(RateLimitStartupSummary.class).summary()).contains(", 1 filter rule\n")
					.contains("\n  filter rules (order ")
					.contains("[0] * /api/** -> filter-0 shared")
					.doesNotContain("web application");
			});
	}

	@Test
	void theStatusEndpointIsNamedWhenItIsOn() {
		ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory", "ratelimit.filter.rules[0].paths=/api/**");
		runner.withPropertyValues("ratelimit.status-endpoint.enabled=true")
			.run((context) -> assertThat(context.getBean(RateLimitStartupSummary.class).summary())
				.contains("\n  status endpoint: GET /rate-limit"));
		runner.run((context) -> assertThat(context.getBean(RateLimitStartupSummary.class).summary())
			.doesNotContain("status endpoint"));
	}

	static class Services {

		@RateLimited(bucket = "login", key = "#username", limit = 5, window = "1m", algorithm = Algorithm.SLIDING_LOG)
		public void login(String username) {
		}

		@RateLimited(bucket = "reports", key = "#apiKey", limitExpression = "#apiKey == 'premium' ? 50 : 5",
				window = "1m", algorithm = Algorithm.GCRA)
		public void reports(String apiKey) {
		}

	}

}
