package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.autoconfigure.RateLimitStartupSummary.StoreTarget;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.health.RateLimitHealthIndicator;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Static master/replica ({@code spring.data.redis.masterreplica.nodes}) on real
 * {@code redis-server} processes, a master and a replica of it: on Lettuce the store
 * decides on the master, whichever order the nodes are listed in; on Jedis startup fails
 * with an analysis naming the property and the deployments that work.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisMasterReplicaTests {

	@RegisterExtension
	static final RedisServerExtension master = RedisServerExtension.standalone();

	@RegisterExtension
	static final RedisServerExtension replica = RedisServerExtension.standalone();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitHealthContributorAutoConfiguration.class, DataRedisAutoConfiguration.class))
		.withPropertyValues(
				// The replica first: the store must find the master, not take the first
				// node.
				"spring.data.redis.masterreplica.nodes=" + replica.server().address() + "," + master.server().address(),
				"ratelimit.store=redis");

	@BeforeAll
	static void replicate() {
		replica.server().command("REPLICAOF", master.host(), Integer.toString(master.port()));
		awaitReplicating();
	}

	private static void awaitReplicating() {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!replica.server().command("INFO", "replication").contains("master_link_status:up")) {
			assertThat(System.nanoTime() - deadline).as("replica linked to the master within 30s").isNegative();
			pause(50);
		}
	}

	@Test
	void onLettuceDecisionsAreOnTheMasterAndTheLimitIsExact(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			FailoverRateLimitStore store = context.getBean(FailoverRateLimitStore.class);
			assertThat(((RedisRateLimitStore) store.primary()).isStarted()).isTrue();
			List<LimitSpec> limits = List.of(LimitSpec.of(5, "1m", Algorithm.FIXED_WINDOW));
			int allowed = 0;
			for (int i = 0; i < 8; i++) {
				if (store.decide("mr", "k", limits, 1).allowed()) {
					allowed++;
				}
			}
			assertThat(allowed).isEqualTo(5);
			assertThat(store.failureCount()).as("every decision on Redis").isZero();
			assertThat(master.server().command("KEYS", "rl:{mr:*")).contains("rl:{mr:k}");
			assertThat(context.getBean(StoreTarget.class).description())
				.startsWith("redis-masterreplica://" + replica.server().address() + "," + master.server().address());
			Health health = context.getBean(RateLimitHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("state", "healthy").doesNotContainKey("lastFailure");
		});
		assertThat(output).doesNotContain("RedisURI is not available").doesNotContain("localhost:6379");
	}

	/**
	 * An application's own factory, with a database: Spring Boot 4.1.1 does not apply
	 * {@code spring.data.redis.database} to static master/replica nodes (the
	 * application's connections and the store's use database 0 then).
	 */
	@Test
	void theNodesGetTheCredentialsDatabaseAndClientNameOfTheConfiguration() {
		for (RedisServerExtension node : List.of(master, replica)) {
			// ACL users are not replicated: each node has its own.
			node.server().command("ACL", "SETUSER", "mr-app", "on", ">mr-secret", "~*", "&*", "+@all");
		}
		this.runner.withBean(LettuceConnectionFactory.class, () -> {
			RedisStaticMasterReplicaConfiguration nodes = new RedisStaticMasterReplicaConfiguration(replica.host(),
					replica.port());
			nodes.node(master.host(), master.port());
			nodes.setDatabase(3);
			nodes.setUsername("mr-app");
			nodes.setPassword(RedisPassword.of("mr-secret"));
			return new LettuceConnectionFactory(nodes,
					LettuceClientConfiguration.builder().clientName("rl-mr").build());
		}).run((context) -> {
			FailoverRateLimitStore store = context.getBean(FailoverRateLimitStore.class);
			assertThat(((RedisRateLimitStore) store.primary()).isStarted()).isTrue();
			assertThat(store.decide("mr-auth", "k", List.of(LimitSpec.of(1, "1m", Algorithm.GCRA)), 1).allowed())
				.isTrue();
			assertThat(store.failureCount()).isZero();
			assertThat(master.server().command("CLIENT", "LIST").lines())
				.anySatisfy((client) -> assertThat(client).contains(" name=rl-mr ")
					.contains(" db=3 ")
					.contains(" user=mr-app ")
					.contains(" cmd=evalsha "));
			assertThat(context.getBean(StoreTarget.class).description()).contains(master.server().address() + "/3");
		});
	}

	/**
	 * The master stopped: decisions go to the failure mode, each within the timeouts;
	 * once the master is back (empty, the replica resynchronised from it), decisions are
	 * on Redis again. Prints the figures for the README.
	 */
	@Test
	void whileTheMasterIsDownDecisionsUseTheFailureModeAndReturnToTheMaster() {
		this.runner.withPropertyValues("ratelimit.redis.timeout=200ms").run((context) -> {
			FailoverRateLimitStore store = context.getBean(FailoverRateLimitStore.class);
			List<LimitSpec> limits = List.of(LimitSpec.of(100, "1m", Algorithm.GCRA));
			assertThat(store.decide("down", "k", limits, 1).allowed()).isTrue();
			master.server().stop();
			List<Long> millis = new ArrayList<>();
			try {
				for (int i = 0; i < 10; i++) {
					long start = System.nanoTime();
					Decision decision = store.decide("down", "k", limits, 1);
					millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
					assertThat(decision.allowed()).as("fallback: 100 per minute in memory").isTrue();
				}
				assertThat(store.failureCount()).isPositive();
			}
			finally {
				master.server().start();
			}
			long restarted = System.nanoTime();
			long deadline = restarted + TimeUnit.SECONDS.toNanos(60);
			long before = store.failureCount();
			while (store.status().degraded() || !master.server().command("KEYS", "rl:{down:*").contains("down")) {
				assertThat(System.nanoTime() - deadline).as("decisions back on the master within 60s").isNegative();
				store.decide("down", "k", limits, 1);
				pause(20);
			}
			System.out.printf(
					"master/replica: decisions with the master down took %s ms; decisions on the "
							+ "master again %d ms after it restarted (%d failures meanwhile)%n",
					millis, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarted),
					store.failureCount() - before);
		});
		awaitReplicating();
	}

	@Test
	void onJedisStartupFailsNamingThePropertyAndTheDeploymentsThatWork() {
		this.runner.withClassLoader(new FilteredClassLoader("io.lettuce")).run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = new RedisTopologyFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis).as("analysis of %s", context.getStartupFailure()).isNotNull();
			assertThat(analysis.getDescription()).startsWith("spring.data.redis.masterreplica.nodes is set")
				.contains("Jedis");
			assertThat(analysis.getAction()).contains("spring.data.redis.client-type=lettuce")
				.contains("spring.data.redis.host")
				.contains("spring.data.redis.sentinel.nodes")
				.contains("spring.data.redis.cluster.nodes");
		});
	}

	private static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
