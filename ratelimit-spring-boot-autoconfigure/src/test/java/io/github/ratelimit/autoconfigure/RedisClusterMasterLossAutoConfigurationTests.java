package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Tag;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.health.RateLimitHealthIndicator;
import io.github.ratelimit.status.BreakerState;
import io.github.ratelimit.testsupport.redis.RedisCluster;
import io.github.ratelimit.testsupport.redis.RedisServer;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configured store on a real 3-master Redis Cluster
 * ({@code spring.data.redis.cluster.nodes}) when the master holding the fleet's keys
 * (heartbeat, epoch) dies: keys on the other masters stay on Redis, the dead master's
 * keys go to the failure mode, the breaker stays closed, health says degraded and names
 * the master; once it restarts its keys are on Redis again.
 */
@Tag("cluster-faults")
class RedisClusterMasterLossAutoConfigurationTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.cluster();

	private static final List<LimitSpec> LIMITS = List
		.of(LimitSpec.builder().limit(1_000_000).window(Duration.ofHours(1)).algorithm(Algorithm.FIXED_WINDOW).build());

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitHealthContributorAutoConfiguration.class));

	@Test
	void theFleetKeysMasterDiesAndOnlyItsKeysLeaveRedis() {
		RedisCluster cluster = redis.redisCluster();
		for (RedisServer node : cluster.nodes()) {
			node.command("CONFIG", "SET", "cluster-require-full-coverage", "no");
		}
		// The fleet's keys are {rl}:instances etc.: on the master serving the slot of
		// "rl".
		RedisServer victim = masterOf(cluster, SlotHash.getSlot("rl"));
		List<String> victimKeys = new ArrayList<>();
		List<String> otherKeys = new ArrayList<>();
		for (int i = 0; victimKeys.size() < 3 || otherKeys.size() < 3; i++) {
			String key = "k" + i;
			(masterOf(cluster, SlotHash.getSlot("b:" + key)) == victim ? victimKeys : otherKeys).add(key);
		}
		this.runner
			.withPropertyValues("spring.data.redis.cluster.nodes=" + String.join(",", redis.nodes()),
					"ratelimit.redis.timeout=200ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				FailoverRateLimitStore store = context.getBean(FailoverRateLimitStore.class);
				RateLimitHealthIndicator health = context.getBean(RateLimitHealthIndicator.class);
				try {
					for (String key : victimKeys) {
						assertThat(store.decide("b", key, LIMITS, 1).origin()).isEqualTo(Decision.Origin.STORE);
					}
					victim.stop();
					long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
					long slowest = 0;
					while (System.nanoTime() - until < 0) {
						for (String key : victimKeys) {
							long start = System.nanoTime();
							assertThat(store.decide("b", key, LIMITS, 1).origin()).isEqualTo(Decision.Origin.FALLBACK);
							slowest = Math.max(slowest, System.nanoTime() - start);
						}
						for (String key : otherKeys) {
							assertThat(store.decide("b", key, LIMITS, 1).origin()).as("decided by a healthy master")
								.isEqualTo(Decision.Origin.STORE);
						}
					}
					Health answer = health.health();
					System.out.printf("Auto-configured, fleet keys' master down: slowest call on its keys %d ms; "
							+ "health %s %s%n", slowest / 1_000_000, answer.getStatus(), answer.getDetails());
					assertThat(answer.getStatus()).isEqualTo(Status.UP);
					assertThat(answer.getDetails()).containsEntry("state", "degraded")
						.containsEntry("breaker", "closed");
					assertThat((String) answer.getDetails().get("lastFailure"))
						.contains("Redis Cluster master " + victim.address());
					assertThat(store.status().breaker()).isEqualTo(BreakerState.CLOSED);
					victim.start();
					long back = System.nanoTime();
					long deadline = back + Duration.ofSeconds(20).toNanos();
					while (store.decide("b", victimKeys.get(0), LIMITS, 1).origin() != Decision.Origin.STORE) {
						assertThat(System.nanoTime() - deadline).as("back on Redis within 20s").isNegative();
						Thread.sleep(20);
					}
					System.out.printf("Auto-configured, master restarted: its keys on Redis again after %d ms%n",
							(System.nanoTime() - back) / 1_000_000);
				}
				finally {
					if (!victim.isRunning()) {
						victim.start();
					}
					cluster.awaitHealthy(Duration.ofSeconds(30));
				}
			});
	}

	private static RedisServer masterOf(RedisCluster cluster, int slot) {
		for (RedisServer node : cluster.nodes()) {
			// The "myself" line of CLUSTER NODES lists the node's own slot ranges.
			for (String line : node.command("CLUSTER", "NODES").split("\n")) {
				if (line.contains("myself") && servesSlot(line, slot)) {
					return node;
				}
			}
		}
		throw new IllegalStateException("No master serves slot " + slot);
	}

	private static boolean servesSlot(String nodesLine, int slot) {
		String[] fields = nodesLine.trim().split(" ");
		for (int i = 8; i < fields.length; i++) {
			String range = fields[i];
			if (range.startsWith("[")) {
				continue;
			}
			int dash = range.indexOf('-');
			int from = Integer.parseInt((dash < 0) ? range : range.substring(0, dash));
			int to = (dash < 0) ? from : Integer.parseInt(range.substring(dash + 1));
			if (slot >= from && slot <= to) {
				return true;
			}
		}
		return false;
	}

}
