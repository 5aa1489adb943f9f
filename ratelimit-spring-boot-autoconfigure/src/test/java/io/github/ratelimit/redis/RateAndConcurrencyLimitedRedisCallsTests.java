package io.github.ratelimit.redis;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.annotation.ConcurrencyLimited;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAopAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimited} and {@code @ConcurrencyLimited} of one bucket on a method, in an
 * application on Redis: each call is one script call that takes the permit and decides,
 * and one more that gives the permit back; a call the rate limit refuses is one. Counted
 * by the Redis server of this class, which only this application calls (its heartbeat is
 * made hourly, so not during the count).
 */
class RateAndConcurrencyLimitedRedisCallsTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitAopAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
				"ratelimit.store=redis", "ratelimit.redis.timeout=5s", "ratelimit.redis.heartbeat-interval=1h",
				// Every rejection reaches Redis, so that the count is exact.
				"ratelimit.redis.local-rejections.enabled=false")
		.withBean(Reports.class);

	@Test
	void eachCallIsOneScriptCallAndItsReleaseAnother() {
		this.runner.run((context) -> {
			Reports reports = context.getBean(Reports.class);
			// Warm: the script loaded, the connections made.
			reports.render("warm");
			long before = evalshaCalls();
			int rendered = 0;
			int refused = 0;
			for (int i = 0; i < 200; i++) {
				try {
					reports.render("acme");
					rendered++;
				}
				catch (RateLimitExceededException ex) {
					refused++;
				}
			}
			long calls = evalshaCalls() - before;
			assertThat(rendered).isEqualTo(150);
			assertThat(refused).isEqualTo(50);
			// 150 rendered: a call and a release each; 50 refused by the rate limit: a
			// call, holding nothing to release. Two annotations, two calls each, made
			// 600.
			assertThat(calls).isEqualTo(150 * 2 + 50);
			assertThat(context.getBean(ConcurrencyLimiters.class).find("reports").holders("acme").count()).isZero();
		});
	}

	private static long evalshaCalls() {
		RedisClient client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		try (StatefulRedisConnection<String, String> admin = client.connect()) {
			Matcher calls = Pattern.compile("cmdstat_evalsha:calls=(\\d+)").matcher(admin.sync().info("commandstats"));
			return calls.find() ? Long.parseLong(calls.group(1)) : 0;
		}
		finally {
			client.shutdown();
		}
	}

	static class Reports {

		@RateLimited(bucket = "reports", key = "#tenant", limit = 150, window = "1h",
				algorithm = Algorithm.SLIDING_WINDOW)
		@ConcurrencyLimited(bucket = "reports", key = "#tenant", permits = 2)
		public String render(String tenant) {
			return "report for " + tenant;
		}

	}

}
