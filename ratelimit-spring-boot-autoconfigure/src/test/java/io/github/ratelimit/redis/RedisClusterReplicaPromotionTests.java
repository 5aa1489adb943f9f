package io.github.ratelimit.redis;

import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.lettuce.core.cluster.RedisClusterClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Tag;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.testsupport.redis.RedisServer;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static io.github.ratelimit.redis.RedisClusterMasterLossTests.await;
import static io.github.ratelimit.redis.RedisClusterMasterLossTests.keys;
import static io.github.ratelimit.redis.RedisClusterMasterLossTests.millis;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisRateLimitStore} on a real Redis Cluster of three masters with one replica
 * each ({@code cluster-node-timeout 1000}) when a master dies: calls for its slots fail
 * within the timeout until its replica is promoted, and are decided by Redis again soon
 * after the promotion, found by a topology refresh (the client has no periodic or
 * adaptive refresh). {@link JedisClusterReplicaPromotionTests} does the same on Jedis.
 * Measured figures are printed; bounds are generous (shared machine).
 */
@Tag("cluster-faults")
class RedisClusterReplicaPromotionTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.clusterWithReplicas();

	private static final Duration TIMEOUT = Duration.ofMillis(200);

	private static final List<LimitSpec> LIMITS = List
		.of(LimitSpec.builder().limit(1_000_000).window(Duration.ofHours(1)).algorithm(Algorithm.FIXED_WINDOW).build());

	private LettuceClusterStore cluster;

	private RedisClusterClient client;

	private RedisRateLimitStore store;

	@BeforeEach
	void connect() {
		this.cluster = LettuceClusterStore.start(redis, TIMEOUT);
		this.client = this.cluster.client;
		this.store = this.cluster.store;
	}

	@AfterEach
	void disconnect() {
		this.cluster.close();
	}

	@Test
	void aDeadMastersSlotsFailWithinTheTimeoutAndAreOnRedisSoonAfterItsReplicaIsPromoted() {
		promotion(redis, this.client, this.store, "Lettuce");
	}

	/**
	 * The same when the dead master also carries the cluster connection's own channel
	 * (the one Lettuce sends commands without a key on, and reconnects to another node on
	 * its own): that channel closing must not make the store drop the whole cluster
	 * connection, whose replacement never learned of the promotion.
	 */
	@Test
	void theSameWhenTheDeadMasterCarriesTheClusterConnectionsOwnChannel() throws IOException {
		int port = this.client.getPartitions().getMasterBySlot(0).getUri().getPort();
		this.cluster.close();
		// Lettuce opens that channel to the node with the fewest clients.
		List<Socket> idle = new ArrayList<>();
		try {
			for (RedisServer node : redis.redisCluster().nodes()) {
				for (int i = 0; node.port() != port && i < 20; i++) {
					idle.add(new Socket("127.0.0.1", node.port()));
				}
			}
			// The channel stays closed for a second after the kill, so that calls see it.
			this.cluster = LettuceClusterStore.start(redis, TIMEOUT, Duration.ofSeconds(1));
			this.client = this.cluster.client;
			this.store = this.cluster.store;
		}
		finally {
			for (Socket socket : idle) {
				socket.close();
			}
		}
		assertThat(clients(redis, port)).as("the victim's clients: one more than any other node's, the channel")
			.isGreaterThan(redis.redisCluster()
				.nodes()
				.stream()
				.filter((node) -> node.port() != port)
				.mapToLong((node) -> clients(redis, node.port()))
				.max()
				.orElseThrow());
		promotion(redis, this.client, this.store, "Lettuce, its own channel on the dead master");
	}

	private static long clients(RedisServerExtension redis, int port) {
		return redis.redisCluster()
			.nodes()
			.stream()
			.filter((node) -> node.port() == port)
			.findFirst()
			.orElseThrow()
			.command("CLIENT", "LIST")
			.lines()
			.count();
	}

	/**
	 * Kills the master of slot 0 and measures its slots' calls until its replica is
	 * promoted and after.
	 * @param partitions tells which master serves a slot
	 */
	static void promotion(RedisServerExtension redis, RedisClusterClient partitions, RedisRateLimitStore store,
			String client) {
		int port = partitions.getPartitions().getMasterBySlot(0).getUri().getPort();
		RedisServer victim = redis.redisCluster()
			.nodes()
			.stream()
			.filter((node) -> node.port() == port)
			.findFirst()
			.orElseThrow();
		List<String> victimKeys = keys(partitions, port, true, 3);
		List<String> otherKeys = keys(partitions, port, false, 3);
		for (String key : victimKeys) {
			assertThat(store.decide("b", key, LIMITS, 1).allowed()).isTrue();
		}
		victim.stop();
		long stopped = System.nanoTime();
		long slowestNanos = 0;
		int failed = 0;
		Set<String> failures = new LinkedHashSet<>();
		long promoted = 0;
		// Until the replica is promoted (one node timeout and an election), calls on the
		// dead master's slots fail; each within the timeout.
		while (promoted == 0) {
			for (String key : victimKeys) {
				long start = System.nanoTime();
				try {
					store.decide("b", key, LIMITS, 1);
				}
				catch (RateLimitStoreException ex) {
					failed++;
					failures.add(ex.getClass().getSimpleName() + ": " + ex.getMessage());
				}
				slowestNanos = Math.max(slowestNanos, System.nanoTime() - start);
			}
			for (String key : otherKeys) {
				assertThat(store.decide("b", key, LIMITS, 1).allowed()).as("decided by a healthy master").isTrue();
			}
			if (promoted(redis, victimKeys.get(0))) {
				promoted = System.nanoTime();
			}
			assertThat(Duration.ofNanos(System.nanoTime() - stopped)).as("replica promoted")
				.isLessThan(Duration.ofSeconds(30));
		}
		System.out.printf(
				"%s, cluster master down (replicas): %d calls on its slots failed, slowest %d ms (timeout %d ms); "
						+ "replica promoted after %d ms; failures: %s%n",
				client, failed, millis(slowestNanos), TIMEOUT.toMillis(), millis(promoted - stopped), failures);
		// Far below the connect timeout (5 s) the issue measured each call waiting.
		assertThat(Duration.ofNanos(slowestNanos)).isLessThan(Duration.ofSeconds(2));
		long since = promoted;
		await(() -> decides(store, victimKeys.get(0)), Duration.ofSeconds(20));
		System.out.printf("%s, cluster replica promoted: its slots decided by Redis again %d ms after the promotion "
				+ "was seen%n", client, millis(System.nanoTime() - since));
		for (String key : victimKeys) {
			await(() -> decides(store, key), Duration.ofSeconds(10));
		}
	}

	/** Whether a surviving node serves the key's slot, through MOVED redirects. */
	private static boolean promoted(RedisServerExtension redis, String key) {
		try {
			redis.redisCluster().command(Duration.ofMillis(500), "SET", "{b:" + key + "}:probe", "1");
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	private static boolean decides(RedisRateLimitStore store, String key) {
		try {
			return store.decide("b", key, LIMITS, 1).allowed();
		}
		catch (RateLimitStoreException ex) {
			return false;
		}
	}

}
