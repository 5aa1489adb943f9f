package io.github.ratelimit.testsupport.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Tests for {@link RedisServerExtension}, against real servers.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class RedisServerExtensionTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	@RegisterExtension
	static final RedisServerExtension cluster = RedisServerExtension.cluster();

	private static final Set<Integer> servedPorts = ConcurrentHashMap.newKeySet();

	private static int standalonePort;

	@BeforeAll
	static void recordPort() {
		standalonePort = redis.port();
	}

	@AfterEach
	void leaveServersRunning() {
		RedisServer server = redis.server();
		server.resume();
		if (!server.isRunning()) {
			server.start();
		}
	}

	@Test
	void startsOnAFreePortAndAnswersPing() {
		RedisServer server = redis.server();
		assertThat(server.isRunning()).isTrue();
		assertThat(server.isPaused()).isFalse();
		assertThat(redis.port()).isPositive().isNotEqualTo(6379).isEqualTo(server.port());
		assertThat(redis.host()).isEqualTo(server.host());
		assertThat(redis.nodes()).containsExactly(server.host() + ":" + server.port());
		assertThat(server.command("PING")).isEqualTo("PONG");
		assertThat(redis.isCluster()).isFalse();
	}

	@Test
	void runsWithoutPersistenceAndAllowsDebugCommands() {
		RedisServer server = redis.server();
		assertThat(server.command("CONFIG", "GET", "save")).isEqualTo("save\n");
		assertThat(server.command("CONFIG", "GET", "appendonly")).isEqualTo("appendonly\nno");
		assertThat(server.command("DEBUG", "SLEEP", "0")).isEqualTo("OK");
	}

	@Test
	void setsAndGets() {
		RedisServer server = redis.server();
		assertThat(server.command("SET", "tests:set-get", "välue 1")).isEqualTo("OK");
		assertThat(server.command("GET", "tests:set-get")).isEqualTo("välue 1");
		assertThat(server.command("TTL", "tests:set-get")).isEqualTo("-1");
		assertThat(server.command("EXPIRE", "tests:set-get", "100")).isEqualTo("1");
		assertThat(Long.parseLong(server.command("TTL", "tests:set-get"))).isBetween(1L, 100L);
		assertThat(server.command("KEYS", "tests:set-get*")).isEqualTo("tests:set-get");
		assertThat(server.command("GET", "tests:missing")).isEmpty();
		assertThat(server.command("INFO", "memory")).contains("used_memory:");
	}

	@Test
	void errorRepliesAreThrown() {
		assertThatThrownBy(() -> redis.server().command("EVALSHA", "0000000000000000000000000000000000000000", "0"))
			.isInstanceOfSatisfying(RedisCommandException.class, (ex) -> assertThat(ex.reply()).startsWith("NOSCRIPT"));
	}

	@Test
	void stopMakesConnectionsFailAndStartComesBackOnTheSamePort() {
		RedisServer server = redis.server();
		int port = server.port();
		server.command("SET", "tests:stop", "1");
		server.stop();
		assertThat(server.isRunning()).isFalse();
		assertThatThrownBy(() -> server.command(Duration.ofSeconds(1), "PING")).isInstanceOf(UncheckedIOException.class)
			.hasRootCauseInstanceOf(ConnectException.class);
		server.stop();
		server.start();
		assertThat(server.isRunning()).isTrue();
		assertThat(server.port()).isEqualTo(port);
		assertThat(redis.port()).isEqualTo(port);
		assertThat(server.command("PING")).isEqualTo("PONG");
		assertThat(server.command("GET", "tests:stop")).isEmpty();
		assertThatIllegalStateException().isThrownBy(server::start).withMessageContaining("already running");
	}

	@Test
	void pauseStallsCommandsUntilResume() throws Exception {
		RedisServer server = redis.server();
		server.pause();
		server.pause();
		assertThat(server.isPaused()).isTrue();
		assertThat(server.isRunning()).isTrue();
		long start = System.nanoTime();
		assertThatThrownBy(() -> server.command(Duration.ofMillis(300), "PING"))
			.isInstanceOf(UncheckedIOException.class)
			.hasRootCauseInstanceOf(SocketTimeoutException.class);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
		CompletableFuture<String> stalled = CompletableFuture
			.supplyAsync(() -> server.command(Duration.ofSeconds(10), "INCR", "tests:pause"));
		Thread.sleep(200);
		assertThat(stalled).isNotDone();
		server.resume();
		assertThat(server.isPaused()).isFalse();
		assertThat(stalled.get(5, TimeUnit.SECONDS)).isEqualTo("1");
		assertThat(server.command(Duration.ofSeconds(1), "PING")).isEqualTo("PONG");
	}

	@Test
	void stopEndsAPausedServer() {
		RedisServer server = redis.server();
		server.pause();
		server.stop();
		assertThat(server.isRunning()).isFalse();
		assertThat(server.isPaused()).isFalse();
		server.start();
		assertThat(server.command("PING")).isEqualTo("PONG");
	}

	@Test
	void restartFlushesData() {
		RedisServer server = redis.server();
		int port = server.port();
		server.command("SET", "tests:restart", "1");
		assertThat(server.command("DBSIZE")).isNotEqualTo("0");
		server.restart();
		assertThat(server.port()).isEqualTo(port);
		assertThat(server.command("DBSIZE")).isEqualTo("0");
		assertThat(server.command("GET", "tests:restart")).isEmpty();
	}

	@Test
	void startFailureReportsTheLogTail() throws IOException {
		RedisServer server = redis.server();
		int port = server.port();
		server.stop();
		try (ServerSocket squatter = new ServerSocket()) {
			squatter.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
			assertThatIllegalStateException().isThrownBy(server::start)
				.withMessageContaining("did not start on " + server.address())
				.withMessageContaining("--- tail of ")
				.withMessageContaining((server instanceof BinaryRedisServer) ? "Address already in use" : "");
			assertThat(server.isRunning()).isFalse();
		}
		server.start();
		assertThat(server.port()).isEqualTo(port);
		assertThat(server.command("PING")).isEqualTo("PONG");
	}

	@Test
	void flushAllDeletesEveryKey() {
		RedisServer server = redis.server();
		server.command("SET", "tests:flush", "1");
		server.flushAll();
		assertThat(server.command("DBSIZE")).isEqualTo("0");
	}

	@Test
	void modesRejectTheOtherModesAccessors() {
		assertThatIllegalStateException().isThrownBy(redis::redisCluster).withMessageContaining("standalone");
		assertThatIllegalStateException().isThrownBy(cluster::server).withMessageContaining("cluster");
		assertThatIllegalStateException().isThrownBy(cluster::port).withMessageContaining("cluster");
		assertThatIllegalStateException().isThrownBy(() -> RedisServerExtension.standalone().port())
			.withMessageContaining("@RegisterExtension");
	}

	@Test
	void withNeitherDockerNorRedisServerTestsFailWithWhatToInstall() {
		assertThatIllegalStateException().isThrownBy(() -> RedisEnvironment.choose("auto", false, false))
			.withMessage("Redis tests need a redis-server binary on the PATH (Debian/Ubuntu: apt-get install "
					+ "redis-server; macOS: brew install redis) or a running Docker engine");
		assertThatIllegalStateException().isThrownBy(() -> RedisEnvironment.choose("binary", true, false))
			.withMessageContaining("apt-get install redis-server");
		assertThatIllegalStateException().isThrownBy(() -> RedisEnvironment.choose("docker", false, true))
			.withMessageContaining("Docker");
		assertThatIllegalStateException().isThrownBy(() -> RedisEnvironment.choose("podman", true, true))
			.withMessageContaining("binary, docker or auto");
		assertThat(RedisEnvironment.choose("auto", true, true)).isEqualTo(RedisEnvironment.Backend.DOCKER);
		assertThat(RedisEnvironment.choose("", false, true)).isEqualTo(RedisEnvironment.Backend.BINARY);
		assertThat(RedisEnvironment.choose("binary", true, true)).isEqualTo(RedisEnvironment.Backend.BINARY);
		assertThat(RedisEnvironment.choose("docker", true, false)).isEqualTo(RedisEnvironment.Backend.DOCKER);
	}

	@Test
	void clusterNodesAreJoinedAndHealthy() {
		RedisCluster redisCluster = cluster.redisCluster();
		assertThat(cluster.isCluster()).isTrue();
		assertThat(redisCluster.nodes()).hasSize(3);
		assertThat(cluster.nodes()).hasSize(3).doesNotHaveDuplicates().noneMatch((node) -> node.endsWith(":6379"));
		for (RedisServer node : redisCluster.nodes()) {
			assertThat(cluster.nodes()).contains(node.address());
			String info = node.command("CLUSTER", "INFO");
			assertThat(info).contains("cluster_state:ok", "cluster_known_nodes:3", "cluster_slots_assigned:16384",
					"cluster_size:3");
		}
	}

	@Test
	void clusterFollowsRedirects() {
		RedisCluster redisCluster = cluster.redisCluster();
		List<String> owners = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			String key = "tests:redirect:" + i;
			assertThat(redisCluster.command("SET", key, "v" + i)).isEqualTo("OK");
			for (RedisServer node : redisCluster.nodes()) {
				assertThat(redisCluster.commandVia(node, Duration.ofSeconds(2), "GET", key)).isEqualTo("v" + i);
			}
			for (RedisServer node : redisCluster.nodes()) {
				try {
					assertThat(node.command("GET", key)).isEqualTo("v" + i);
					owners.add(node.address());
				}
				catch (RedisCommandException ex) {
					assertThat(ex.reply()).startsWith("MOVED ");
				}
			}
		}
		assertThat(owners).hasSize(30);
		assertThat(Set.copyOf(owners)).hasSize(3);
	}

	@Test
	void clusterIsUsableWithRedisCliRedirects() throws Exception {
		List<RedisServer> nodes = cluster.redisCluster().nodes();
		assertThat(redisCli("-c", "-h", nodes.get(0).host(), "-p", Integer.toString(nodes.get(0).port()), "SET",
				"tests:redis-cli", "from-cli"))
			.isEqualTo("OK");
		for (RedisServer node : nodes) {
			assertThat(redisCli("-c", "-h", node.host(), "-p", Integer.toString(node.port()), "GET", "tests:redis-cli"))
				.isEqualTo("from-cli");
		}
	}

	@Test
	void clusterNodeRestartsAndRejoins() {
		RedisCluster redisCluster = cluster.redisCluster();
		RedisServer node = redisCluster.nodes().get(2);
		int port = node.port();
		node.restart();
		assertThat(node.port()).isEqualTo(port);
		redisCluster.awaitHealthy(Duration.ofSeconds(10));
		assertThat(redisCluster.command("SET", "tests:rejoin", "1")).isEqualTo("OK");
		assertThat(redisCluster.command("GET", "tests:rejoin")).isEqualTo("1");
	}

	private static String redisCli(String... args) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>();
		command.add(RedisEnvironment.clusterBinaries().requireCli().toString());
		command.addAll(List.of(args));
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		process.getOutputStream().close();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).as(output).isZero();
		return output.trim();
	}

	/**
	 * A {@code @Nested} class shares the servers of its enclosing class.
	 */
	@Nested
	class NestedTests {

		@Test
		void sharesTheServerOfTheEnclosingClass() {
			assertThat(redis.port()).isEqualTo(standalonePort);
			assertThat(redis.server().command("PING")).isEqualTo("PONG");
			assertThat(cluster.redisCluster().nodes()).hasSize(3);
		}

	}

	/**
	 * A base class with the extension on a static field.
	 */
	abstract static class SharedBase {

		@RegisterExtension
		static final RedisServerExtension shared = RedisServerExtension.standalone();

		@Test
		void eachSubclassGetsAFreshServer() {
			RedisServer server = shared.server();
			assertThat(server.command("DBSIZE")).isEqualTo("0");
			server.command("SET", "tests:marker", getClass().getName());
			assertThat(servedPorts.add(server.port())).as("a server of its own").isTrue();
			assertThat(server.port()).isNotEqualTo(standalonePort);
		}

	}

	@Nested
	class FirstSubclass extends SharedBase {

	}

	@Nested
	class SecondSubclass extends SharedBase {

	}

}
