package io.github.ratelimit.testsupport.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * A real Redis Cluster of three masters (without replicas, or with one replica each),
 * each node a {@code redis-server} process on {@code 127.0.0.1}, joined with
 * {@code redis-cli --cluster create}. Obtained from
 * {@link RedisServerExtension#redisCluster()}.
 * <p>
 * Nodes run with {@code --cluster-node-timeout 5000} without replicas, and 1000 with
 * replicas (so that a replica takes over a stopped master within seconds). A single node
 * can be stopped, restarted or paused through {@link #nodes()}; a restarted node rejoins
 * with its {@code nodes.conf} but without data. Use {@link #awaitHealthy(Duration)} to
 * wait until the cluster is whole again.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisCluster {

	/** How many masters a cluster has. */
	public static final int MASTERS = 3;

	private static final Duration CREATE_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration HEALTHY_TIMEOUT = Duration.ofSeconds(20);

	private static final int MAX_REDIRECTS = 5;

	private final List<BinaryRedisServer> servers;

	private final int replicas;

	private RedisCluster(List<BinaryRedisServer> servers, int replicas) {
		this.servers = servers;
		this.replicas = replicas;
	}

	/**
	 * Starts three cluster-enabled servers, joins them and waits until every node reports
	 * {@code cluster_state:ok} with all slots assigned.
	 * @param binaries {@code redis-server} and {@code redis-cli}
	 * @return the running cluster
	 */
	static RedisCluster start(RedisEnvironment.Binaries binaries) {
		return start(binaries, 0);
	}

	/**
	 * Starts three masters and {@code replicas} replicas of each, joins them and waits
	 * until every node reports {@code cluster_state:ok} with all slots assigned.
	 * @param binaries {@code redis-server} and {@code redis-cli}
	 * @param replicas the replicas of each master, 0 or 1
	 * @return the running cluster
	 */
	static RedisCluster start(RedisEnvironment.Binaries binaries, int replicas) {
		List<BinaryRedisServer> servers = new ArrayList<>();
		try {
			for (int i = 0; i < MASTERS * (1 + replicas); i++) {
				servers.add(BinaryRedisServer.startNew(binaries, true, (replicas > 0) ? 1000 : 5000));
			}
			RedisCluster cluster = new RedisCluster(List.copyOf(servers), replicas);
			cluster.create(binaries.requireCli());
			cluster.awaitHealthy(HEALTHY_TIMEOUT);
			return cluster;
		}
		catch (RuntimeException ex) {
			for (BinaryRedisServer server : servers) {
				try {
					server.close();
				}
				catch (RuntimeException suppressed) {
					ex.addSuppressed(suppressed);
				}
			}
			throw ex;
		}
	}

	/**
	 * The nodes in the order they were started: without replicas all masters; with
	 * replicas, the masters first as the cluster was created (a replica may have taken
	 * over since).
	 * @return the nodes
	 */
	public List<RedisServer> nodes() {
		return Collections.unmodifiableList(this.servers);
	}

	/**
	 * The address of every node as {@code host:port}.
	 * @return the addresses
	 */
	public List<String> addresses() {
		return this.servers.stream().map(RedisServer::address).toList();
	}

	/**
	 * Stops every node: the processes end and the ports are freed. Nodes can be started
	 * again one by one through {@link #nodes()}.
	 */
	public void stop() {
		@Nullable RuntimeException failure = null;
		for (BinaryRedisServer server : this.servers) {
			try {
				server.stop();
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * Runs one command like {@code redis-cli -c}: sent to the first running node,
	 * following {@code MOVED} and {@code ASK} redirects, with
	 * {@link RedisServer#DEFAULT_COMMAND_TIMEOUT}.
	 * @param args the command and its arguments
	 * @return the reply as text, see {@link RedisServer#command(Duration, String...)}
	 */
	public String command(String... args) {
		return command(RedisServer.DEFAULT_COMMAND_TIMEOUT, args);
	}

	/**
	 * Runs one command like {@code redis-cli -c}: sent to the first running node,
	 * following {@code MOVED} and {@code ASK} redirects.
	 * @param timeout how long to wait to connect and for each read of a reply
	 * @param args the command and its arguments
	 * @return the reply as text, see {@link RedisServer#command(Duration, String...)}
	 */
	public String command(Duration timeout, String... args) {
		RedisServer first = this.servers.stream()
			.filter(RedisServer::isRunning)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No node of the cluster is running"));
		return commandVia(first, timeout, args);
	}

	/**
	 * Runs one command sent first to the given node, following {@code MOVED} and
	 * {@code ASK} redirects like {@code redis-cli -c}.
	 * @param node the node to send it to first
	 * @param timeout how long to wait to connect and for each read of a reply
	 * @param args the command and its arguments
	 * @return the reply as text, see {@link RedisServer#command(Duration, String...)}
	 */
	public String commandVia(RedisServer node, Duration timeout, String... args) {
		String host = node.host();
		int port = node.port();
		boolean asking = false;
		for (int redirect = 0;; redirect++) {
			try {
				List<String[]> commands = asking ? List.of(new String[] { "ASKING" }, args)
						: Collections.singletonList(args);
				List<String> replies = Resp.callAll(host, port, timeout, commands);
				return replies.get(replies.size() - 1);
			}
			catch (RedisCommandException ex) {
				String[] parts = ex.reply().split(" ");
				boolean moved = parts[0].equals("MOVED");
				if ((!moved && !parts[0].equals("ASK")) || parts.length < 3 || redirect >= MAX_REDIRECTS) {
					throw ex;
				}
				int colon = parts[2].lastIndexOf(':');
				String target = parts[2].substring(0, colon);
				host = target.isEmpty() ? host : target;
				port = Integer.parseInt(parts[2].substring(colon + 1));
				asking = !moved;
			}
		}
	}

	/**
	 * Deletes every key on every running node.
	 */
	public void flushAll() {
		for (BinaryRedisServer server : this.servers) {
			if (server.isRunning()) {
				server.flushAll();
			}
		}
	}

	/**
	 * Waits until every node answers {@code CLUSTER INFO} with {@code cluster_state:ok},
	 * all 16384 slots assigned and ok, and all nodes known; with replicas, until every
	 * master has its replica and every replica is in sync.
	 * @param timeout how long to wait at most
	 * @throws IllegalStateException if the cluster is not healthy in time (the message
	 * has the last {@code CLUSTER INFO} that was not)
	 */
	public void awaitHealthy(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		String problem;
		while (true) {
			String current = unhealthyNode();
			if (current == null) {
				return;
			}
			problem = current;
			if (System.nanoTime() > deadline) {
				break;
			}
			LocalProcesses.sleep(50);
		}
		throw new IllegalStateException("Redis cluster " + addresses() + " not healthy within " + timeout.toMillis()
				+ "ms: " + problem + "\n--- tail of each node's log ---\n" + logTails());
	}

	private @Nullable String unhealthyNode() {
		for (BinaryRedisServer server : this.servers) {
			String info;
			try {
				info = server.command(Duration.ofSeconds(1), "CLUSTER", "INFO");
			}
			catch (RuntimeException ex) {
				return server.address() + ": " + ex.getMessage();
			}
			if (!info.contains("cluster_state:ok") || !info.contains("cluster_slots_assigned:16384")
					|| !info.contains("cluster_slots_ok:16384")
					|| !info.contains("cluster_known_nodes:" + this.servers.size() + "\r\n")) {
				return server.address() + ": " + info.replace("\r\n", " ");
			}
			if (this.replicas > 0) {
				// A replica only takes over for its master if it was in sync lately: one
				// that rejoined (a killed master restarted) must have synced first.
				String replication;
				try {
					replication = server.command(Duration.ofSeconds(1), "INFO", "replication");
				}
				catch (RuntimeException ex) {
					return server.address() + ": " + ex.getMessage();
				}
				boolean replica = replication.contains("role:slave");
				if ((replica && (!replication.contains("master_link_status:up")
						|| !replication.contains("master_sync_in_progress:0")))
						|| (!replica && !replication.contains("connected_slaves:" + this.replicas + "\r\n"))) {
					return server.address() + ": " + replication.replace("\r\n", " ");
				}
			}
		}
		return null;
	}

	/**
	 * Stops every node for good and deletes their temp directories.
	 */
	void close() {
		@Nullable RuntimeException failure = null;
		for (BinaryRedisServer server : this.servers) {
			try {
				server.close();
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	@Override
	public String toString() {
		return "Redis cluster " + addresses();
	}

	private void create(Path cli) {
		List<String> command = new ArrayList<>(List.of(cli.toString(), "--cluster", "create"));
		command.addAll(addresses());
		command.addAll(Arrays.asList("--cluster-replicas", Integer.toString(this.replicas), "--cluster-yes"));
		Path output = this.servers.get(0).dir().resolve("cluster-create.log");
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(output.toFile())
				.start();
			process.getOutputStream().close();
			if (!process.waitFor(CREATE_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
				LocalProcesses.end(process, 1000);
				throw new IllegalStateException(String.join(" ", command) + " did not finish within "
						+ CREATE_TIMEOUT.toSeconds() + "s:\n" + read(output));
			}
			if (process.exitValue() != 0) {
				throw new IllegalStateException(
						String.join(" ", command) + " failed (" + process.exitValue() + "):\n" + read(output));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run " + cli, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while creating the Redis cluster", ex);
		}
	}

	private static String read(Path file) {
		try {
			return Files.readString(file, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			return "(no output)";
		}
	}

	private String logTails() {
		StringBuilder tails = new StringBuilder();
		for (BinaryRedisServer server : this.servers) {
			tails.append("[")
				.append(server.address())
				.append("]\n")
				.append(LocalProcesses.tail(server.dir().resolve("redis.log"), 15))
				.append('\n');
		}
		return tails.toString();
	}

}
