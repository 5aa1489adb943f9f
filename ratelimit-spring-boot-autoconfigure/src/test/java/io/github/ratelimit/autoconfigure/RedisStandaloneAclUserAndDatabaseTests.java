package io.github.ratelimit.autoconfigure;

import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.autoconfigure.RateLimitStartupSummary.StoreTarget;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A standalone Redis with an ACL user, a database other than 0 and a client name, all
 * from {@code spring.data.redis.*} only: the store decides on Redis as that user, in that
 * database, under that name, on Lettuce and on Jedis, and the password shows nowhere.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisStandaloneAclUserAndDatabaseTests {

	private static final String PASSWORD = "acl-db-pw-7";

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitHealthContributorAutoConfiguration.class, DataRedisAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
				"spring.data.redis.database=3", "spring.data.redis.username=rl-acl",
				"spring.data.redis.password=" + PASSWORD, "ratelimit.store=redis");

	@BeforeAll
	static void createUser() {
		redis.server().command("ACL", "SETUSER", "rl-acl", "on", ">" + PASSWORD, "~*", "&*", "+@all");
	}

	@Test
	void onLettuceDecisionsAreOnRedisAsTheUserInTheDatabaseUnderTheClientName(CapturedOutput output) {
		this.runner.withPropertyValues("spring.data.redis.client-name=rl-lettuce-acl")
			.run((context) -> decidesAsTheUserInDatabase3(context.getBean(FailoverRateLimitStore.class),
					context.getBean(StoreTarget.class), "lettuce", "rl-lettuce-acl"));
		assertThat(output).doesNotContain(PASSWORD);
	}

	@Test
	void onJedisDecisionsAreOnRedisAsTheUserInTheDatabaseUnderTheClientName(CapturedOutput output) {
		this.runner.withClassLoader(new FilteredClassLoader("io.lettuce"))
			.withPropertyValues("spring.data.redis.client-name=rl-jedis-acl")
			.run((context) -> decidesAsTheUserInDatabase3(context.getBean(FailoverRateLimitStore.class),
					context.getBean(StoreTarget.class), "jedis", "rl-jedis-acl"));
		assertThat(output).doesNotContain(PASSWORD);
	}

	private void decidesAsTheUserInDatabase3(FailoverRateLimitStore store, StoreTarget target, String bucket,
			String clientName) {
		assertThat(((RedisRateLimitStore) store.primary()).isStarted()).isTrue();
		List<LimitSpec> limits = List.of(LimitSpec.of(3, "1m", Algorithm.FIXED_WINDOW));
		for (int i = 0; i < 3; i++) {
			Decision decision = store.decide(bucket, "k", limits, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.origin()).isEqualTo(Decision.Origin.STORE);
		}
		assertThat(store.decide(bucket, "k", limits, 1).allowed()).as("the fourth of 3 per minute").isFalse();
		assertThat(store.failureCount()).as("every decision on Redis").isZero();
		assertThat(keys(3, "rl:{" + bucket + ":*")).as("the limit's key in database 3").isNotEmpty();
		assertThat(keys(0, "rl:{" + bucket + ":*")).as("nothing in database 0").isEmpty();
		assertThat(redis.server().command("CLIENT", "LIST").lines())
			.as("the store's connection: the user, the database and the client name")
			.anySatisfy((client) -> assertThat(client).contains(" name=" + clientName + " ")
				.contains(" db=3 ")
				.contains(" user=rl-acl ")
				.contains(" cmd=evalsha "));
		assertThat(target.description()).contains(redis.server().address() + "/3").doesNotContain(PASSWORD);
	}

	private static List<String> keys(int database, String pattern) {
		RedisClient client = RedisClient
			.create(RedisURI.builder().withHost(redis.host()).withPort(redis.port()).withDatabase(database).build());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return connection.sync().keys(pattern);
		}
		finally {
			client.shutdown();
		}
	}

}
