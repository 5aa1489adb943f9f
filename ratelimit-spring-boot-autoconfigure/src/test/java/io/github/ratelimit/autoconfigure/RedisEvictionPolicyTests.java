package io.github.ratelimit.autoconfigure;

import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.health.RateLimitHealthIndicator;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisEvictionPolicy} on a real Redis: a policy that may evict limit keys is
 * logged at WARN and named in health and the startup summary; {@code noeviction} logs no
 * warning; a Redis that refuses {@code CONFIG} (an ACL user without {@code +config}, as
 * on managed services) shows {@code unknown}.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisEvictionPolicyTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final String WARNING = "evicts limit keys (they all have a time-to-live)";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitHealthContributorAutoConfiguration.class, DataRedisAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());

	@AfterEach
	void restoreDefaults() {
		redis.server().command("CONFIG", "SET", "maxmemory-policy", "noeviction");
		redis.server().command("CONFIG", "SET", "maxmemory", "0");
		redis.server().command("ACL", "DELUSER", "noconfig");
	}

	@Test
	void allKeysLruIsAWarningAndNamedInHealthAndTheSummary(CapturedOutput output) {
		redis.server().command("CONFIG", "SET", "maxmemory", "2mb");
		redis.server().command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
		this.runner.run((context) -> {
			assertThat(health(context.getBean(RateLimitHealthIndicator.class))).containsEntry("maxmemoryPolicy",
					"allkeys-lru");
			assertThat(context.getBean(RateLimitStartupSummary.class).summary())
				.startsWith("Rate limiting: store redis://" + redis.host() + ":" + redis.port()
						+ " (maxmemory-policy allkeys-lru, evicts limit keys), ");
		});
		assertThat(output).containsOnlyOnce("Redis's maxmemory-policy is allkeys-lru: when Redis reaches maxmemory it "
				+ WARNING + ", and an evicted limit starts again from zero on every instance. "
				+ "Set maxmemory-policy noeviction");
		assertThat(output).contains("WARN");
	}

	@Test
	void aVolatilePolicyIsAWarningToo(CapturedOutput output) {
		redis.server().command("CONFIG", "SET", "maxmemory-policy", "volatile-ttl");
		this.runner.run((context) -> assertThat(health(context.getBean(RateLimitHealthIndicator.class)))
			.containsEntry("maxmemoryPolicy", "volatile-ttl"));
		assertThat(output)
			.contains("Redis's maxmemory-policy is volatile-ttl: when Redis reaches maxmemory it " + WARNING);
	}

	@Test
	void noEvictionLogsNoWarning(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(health(context.getBean(RateLimitHealthIndicator.class))).containsEntry("maxmemoryPolicy",
					"noeviction");
			assertThat(context.getBean(RateLimitStartupSummary.class).summary())
				.startsWith("Rate limiting: store redis://" + redis.host() + ":" + redis.port()
						+ " (maxmemory-policy noeviction), ");
		});
		assertThat(output).doesNotContain("maxmemory-policy is").doesNotContain("Could not check");
	}

	@Test
	void aUserWithoutConfigShowsUnknown(CapturedOutput output) {
		redis.server().command("ACL", "SETUSER", "noconfig", "on", ">secret", "~*", "&*", "+@all", "-config");
		this.runner.withPropertyValues("spring.data.redis.username=noconfig", "spring.data.redis.password=secret")
			.run((context) -> {
				assertThat(health(context.getBean(RateLimitHealthIndicator.class))).containsEntry("maxmemoryPolicy",
						"unknown");
				assertThat(context.getBean(RateLimitStartupSummary.class).summary())
					.contains(" (maxmemory-policy unknown), ");
			});
		assertThat(output).containsOnlyOnce(
				"Could not check Redis's maxmemory-policy (CONFIG GET maxmemory-policy " + "was refused: NOPERM");
		assertThat(output).doesNotContain("maxmemory-policy is");
	}

	@Test
	void aReconnectReadsThePolicyAgainAndLogsOnlyWhatChanged(CapturedOutput output) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		try {
			RedisEvictionPolicy policy = new RedisEvictionPolicy(factory);
			policy.check();
			assertThat(policy.policy()).isEqualTo("noeviction");
			redis.server().command("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu");
			policy.check();
			policy.check();
			assertThat(policy.policy()).isEqualTo("allkeys-lfu");
			assertThat(output).containsOnlyOnce("maxmemory-policy is allkeys-lfu");
		}
		finally {
			factory.destroy();
		}
	}

	private static Map<String, Object> health(RateLimitHealthIndicator indicator) {
		Health health = indicator.health();
		return health.getDetails();
	}

}
