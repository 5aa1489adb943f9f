package io.github.ratelimit.testsupport.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;

/**
 * A Sentinel deployment of {@code redis-server} processes on {@code 127.0.0.1}: a master,
 * one replica of it and one Sentinel ({@code redis-server --sentinel}, quorum 1) that
 * monitors the master as {@value #MASTER_NAME}, with a down-after of one second so a
 * killed master is failed over within seconds. Started per test (a failover changes the
 * deployment for good) and closed by the test; the JVM shutdown hook ends whatever is
 * left.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisSentinelGroup implements AutoCloseable, LocalProcesses.Disposable {

	/** The name the Sentinel monitors the master under. */
	public static final String MASTER_NAME = "mymaster";

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

	private final BinaryRedisServer master;

	private final BinaryRedisServer replica;

	private final Path dir;

	private volatile int sentinelPort;

	private volatile @Nullable Process sentinel;

	private RedisSentinelGroup(BinaryRedisServer master, BinaryRedisServer replica, Path dir) {
		this.master = master;
		this.replica = replica;
		this.dir = dir;
	}

	/**
	 * Starts a master, a replica of it and a Sentinel, and waits until the replica is
	 * linked and the Sentinel knows the replica (without it there is nothing to fail over
	 * to).
	 * @return the running deployment
	 * @throws IllegalStateException if it does not come up within 30 seconds
	 */
	public static RedisSentinelGroup start() {
		RedisEnvironment.Binaries binaries = RedisEnvironment.standaloneBinaries();
		BinaryRedisServer master = BinaryRedisServer.startNew(binaries, false);
		BinaryRedisServer replica;
		try {
			replica = BinaryRedisServer.startNew(binaries, false);
		}
		catch (RuntimeException ex) {
			master.close();
			throw ex;
		}
		RedisSentinelGroup group = new RedisSentinelGroup(master, replica,
				LocalProcesses.tempDir("ratelimit-sentinel-"));
		LocalProcesses.register(group);
		try {
			replica.command("REPLICAOF", master.host(), Integer.toString(master.port()));
			group.await("the replica linked to the master",
					() -> replica.command("INFO", "replication").contains("master_link_status:up"));
			group.launchSentinel(binaries);
			group.await("the Sentinel knowing the replica", () -> {
				String replicas = group.sentinelCommand("SENTINEL", "REPLICAS", MASTER_NAME);
				return replicas.contains(Integer.toString(replica.port())) && !replicas.contains("disconnected")
						&& !replicas.contains("s_down");
			});
			return group;
		}
		catch (RuntimeException ex) {
			group.close();
			throw ex;
		}
	}

	/**
	 * The master the deployment started with.
	 * @return the master
	 */
	public RedisServer master() {
		return this.master;
	}

	/**
	 * The replica the deployment started with, the one a failover promotes.
	 * @return the replica
	 */
	public RedisServer replica() {
		return this.replica;
	}

	/**
	 * The Sentinel's address, for {@code spring.data.redis.sentinel.nodes}.
	 * @return {@code 127.0.0.1:<port>}
	 */
	public String sentinelAddress() {
		return BinaryRedisServer.HOST + ":" + this.sentinelPort;
	}

	/**
	 * Runs one command on the Sentinel, e.g. {@code SENTINEL get-master-addr-by-name}.
	 * @param args the command and its arguments
	 * @return the reply as text, see {@link RedisServer#command(Duration, String...)}
	 */
	public String sentinelCommand(String... args) {
		return Resp.call(BinaryRedisServer.HOST, this.sentinelPort, Duration.ofSeconds(5), args);
	}

	/**
	 * The port of the master as the Sentinel currently names it.
	 * @return the port
	 */
	public int currentMasterPort() {
		List<String> address = sentinelCommand("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME).lines().toList();
		return Integer.parseInt(address.get(1).trim());
	}

	/**
	 * Kills the master with {@code SIGKILL}, by its PID, and waits until the process is
	 * gone: no shutdown, no last words to the replica or the clients.
	 */
	public void killMaster() {
		long pid = this.master.pid();
		if (pid < 0) {
			throw new IllegalStateException("The master " + this.master + " is not running");
		}
		LocalProcesses.signal(pid, "KILL");
		ProcessHandle.of(pid).ifPresent((handle) -> handle.onExit().orTimeout(10, TimeUnit.SECONDS).join());
	}

	/**
	 * Ends the Sentinel, the replica and the master and deletes their temp directories.
	 */
	@Override
	public void close() {
		try {
			Process current = this.sentinel;
			if (current != null) {
				LocalProcesses.end(current, 5000);
			}
		}
		finally {
			this.sentinel = null;
			this.replica.close();
			this.master.close();
			LocalProcesses.unregister(this);
			LocalProcesses.deleteRecursively(this.dir);
		}
	}

	@Override
	public void dispose() {
		Process current = this.sentinel;
		if (current != null && current.isAlive()) {
			LocalProcesses.end(current, 2000);
		}
		this.replica.dispose();
		this.master.dispose();
		LocalProcesses.deleteRecursively(this.dir);
	}

	private void launchSentinel(RedisEnvironment.Binaries binaries) {
		String failure = "";
		for (int attempt = 0; attempt < 5; attempt++) {
			this.sentinelPort = LocalProcesses.freePort();
			// The Sentinel rewrites its configuration file: it must be a file of its own.
			Path config = this.dir.resolve("sentinel-" + this.sentinelPort + ".conf");
			String text = String.join("\n", "port " + this.sentinelPort, "bind " + BinaryRedisServer.HOST,
					"daemonize no", "dir " + this.dir, "logfile " + this.dir.resolve("sentinel.log"),
					"sentinel monitor " + MASTER_NAME + " " + this.master.host() + " " + this.master.port() + " 1",
					"sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
					"sentinel failover-timeout " + MASTER_NAME + " 5000", "");
			Process started;
			try {
				Files.writeString(config, text, StandardCharsets.UTF_8);
				started = new ProcessBuilder(binaries.server().toString(), config.toString(), "--sentinel")
					.directory(this.dir.toFile())
					.redirectErrorStream(true)
					.redirectOutput(Redirect.appendTo(this.dir.resolve("sentinel-stdout.log").toFile()))
					.start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot run " + binaries.server() + " --sentinel", ex);
			}
			this.sentinel = started;
			long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
			while (started.isAlive() && System.nanoTime() - deadline < 0) {
				try {
					if ("PONG".equals(sentinelCommand("PING"))) {
						return;
					}
				}
				catch (UncheckedIOException | RedisCommandException ex) {
					// not listening yet
				}
				LocalProcesses.sleep(20);
			}
			LocalProcesses.end(started, 2000);
			this.sentinel = null;
			failure = LocalProcesses.tail(this.dir.resolve("sentinel.log"), 20);
			if (!failure.contains("Address already in use")) {
				break;
			}
		}
		throw new IllegalStateException("redis-server --sentinel did not start:\n" + failure);
	}

	private void await(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (true) {
			try {
				if (condition.getAsBoolean()) {
					return;
				}
			}
			catch (RuntimeException ex) {
				// not there yet
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("Timed out after " + READY_TIMEOUT.toSeconds() + "s waiting for " + what
						+ "\n--- tail of the Sentinel's log ---\n"
						+ LocalProcesses.tail(this.dir.resolve("sentinel.log"), 20));
			}
			LocalProcesses.sleep(50);
		}
	}

	@Override
	public String toString() {
		return "Sentinel " + sentinelAddress() + " monitoring " + MASTER_NAME + " (" + this.master + ", replica "
				+ this.replica + ")";
	}

}
