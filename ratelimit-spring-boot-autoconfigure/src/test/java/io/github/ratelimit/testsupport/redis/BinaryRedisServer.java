package io.github.ratelimit.testsupport.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} process on {@code 127.0.0.1}, with its own temp directory for
 * its log (and, in a cluster, its {@code nodes.conf}). Ended only through the
 * {@link Process} it was started as.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class BinaryRedisServer implements RedisServer, LocalProcesses.Disposable {

	static final String HOST = "127.0.0.1";

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(15);

	private static final int START_ATTEMPTS = 5;

	private static final int LOG_TAIL_LINES = 40;

	private final RedisEnvironment.Binaries binaries;

	private final Path dir;

	private final boolean clusterNode;

	private final int clusterNodeTimeoutMillis;

	private final Object lock = new Object();

	private volatile int port;

	private volatile int busPort;

	private volatile @Nullable Process process;

	private volatile boolean paused;

	private volatile boolean closed;

	private BinaryRedisServer(RedisEnvironment.Binaries binaries, Path dir, boolean clusterNode,
			int clusterNodeTimeoutMillis) {
		this.binaries = binaries;
		this.dir = dir;
		this.clusterNode = clusterNode;
		this.clusterNodeTimeoutMillis = clusterNodeTimeoutMillis;
	}

	/**
	 * Starts a server on a free port.
	 * @param binaries the binaries to run
	 * @param clusterNode whether to start it with {@code --cluster-enabled yes}
	 * @return the running server
	 * @throws IllegalStateException if it cannot be started
	 */
	static BinaryRedisServer startNew(RedisEnvironment.Binaries binaries, boolean clusterNode) {
		return startNew(binaries, clusterNode, 5000);
	}

	/**
	 * Starts a server on a free port.
	 * @param binaries the binaries to run
	 * @param clusterNode whether to start it with {@code --cluster-enabled yes}
	 * @param clusterNodeTimeoutMillis its {@code --cluster-node-timeout} (after which a
	 * replica takes over a master that stopped answering)
	 * @return the running server
	 * @throws IllegalStateException if it cannot be started
	 */
	static BinaryRedisServer startNew(RedisEnvironment.Binaries binaries, boolean clusterNode,
			int clusterNodeTimeoutMillis) {
		BinaryRedisServer server = new BinaryRedisServer(binaries, LocalProcesses.tempDir("ratelimit-redis-"),
				clusterNode, clusterNodeTimeoutMillis);
		LocalProcesses.register(server);
		try {
			synchronized (server.lock) {
				server.launch(true);
			}
			return server;
		}
		catch (RuntimeException ex) {
			server.close();
			throw ex;
		}
	}

	@Override
	public String host() {
		return HOST;
	}

	@Override
	public int port() {
		return this.port;
	}

	/**
	 * The temp directory of this server.
	 * @return the directory
	 */
	Path dir() {
		return this.dir;
	}

	/**
	 * The PID of the running process.
	 * @return the PID, or -1 when stopped
	 */
	long pid() {
		Process current = this.process;
		return (current != null) ? current.pid() : -1;
	}

	@Override
	public void stop() {
		end((current) -> {
			if (this.paused && current.isAlive()) {
				LocalProcesses.signal(current.pid(), "CONT");
			}
			LocalProcesses.end(current, 5000);
		});
	}

	@Override
	public void kill() {
		end((current) -> {
			// SIGKILL alone: SIGTERM would let Redis run its shutdown first.
			current.destroyForcibly();
			try {
				if (!current.waitFor(10, TimeUnit.SECONDS)) {
					throw new IllegalStateException("Redis server on port " + this.port + " did not end after SIGKILL");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while killing the Redis server on port " + this.port, ex);
			}
		});
	}

	/** Ends the running process with {@code end}; does nothing when it is stopped. */
	private void end(Consumer<Process> end) {
		synchronized (this.lock) {
			Process current = this.process;
			if (current == null) {
				return;
			}
			end.accept(current);
			this.paused = false;
			this.process = null;
		}
	}

	@Override
	public void start() {
		synchronized (this.lock) {
			if (this.closed) {
				throw new IllegalStateException(
						"Redis server on port " + this.port + " is closed: its test class ended");
			}
			Process current = this.process;
			if (current != null && current.isAlive()) {
				throw new IllegalStateException("Redis server on port " + this.port + " is already running");
			}
			this.process = null;
			this.paused = false;
			launch(false);
		}
	}

	@Override
	public void pause() {
		synchronized (this.lock) {
			Process current = requireRunning("pause");
			if (!this.paused) {
				LocalProcesses.signal(current.pid(), "STOP");
				LocalProcesses.awaitStopped(current.pid(), true);
				this.paused = true;
			}
		}
	}

	@Override
	public void resume() {
		synchronized (this.lock) {
			Process current = this.process;
			if (this.paused && current != null && current.isAlive()) {
				LocalProcesses.signal(current.pid(), "CONT");
				LocalProcesses.awaitStopped(current.pid(), false);
			}
			this.paused = false;
		}
	}

	@Override
	public boolean isRunning() {
		Process current = this.process;
		return current != null && current.isAlive();
	}

	@Override
	public boolean isPaused() {
		return this.paused && isRunning();
	}

	/**
	 * Stops the server for good and deletes its temp directory.
	 */
	void close() {
		synchronized (this.lock) {
			this.closed = true;
			try {
				stop();
			}
			finally {
				LocalProcesses.unregister(this);
				LocalProcesses.deleteRecursively(this.dir);
			}
		}
	}

	@Override
	public void dispose() {
		this.closed = true;
		Process current = this.process;
		if (current != null && current.isAlive()) {
			if (this.paused) {
				// A stopped process only acts on SIGTERM once continued.
				try {
					LocalProcesses.signal(current.pid(), "CONT");
				}
				catch (RuntimeException ex) {
					current.destroyForcibly();
				}
			}
			LocalProcesses.end(current, 2000);
		}
		LocalProcesses.deleteRecursively(this.dir);
	}

	@Override
	public String toString() {
		return "redis-server " + address() + (this.clusterNode ? " (cluster node)" : "") + " in " + this.dir;
	}

	private Process requireRunning(String action) {
		Process current = this.process;
		if (current == null || !current.isAlive()) {
			throw new IllegalStateException(
					"Cannot " + action + " Redis server on port " + this.port + ": not running");
		}
		return current;
	}

	/**
	 * Starts the process and waits until it answers; on a fresh server a port that cannot
	 * be bound is replaced by another free one, on a restart the same port is retried.
	 */
	private void launch(boolean newPorts) {
		String failure = "";
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			if (newPorts) {
				pickPorts();
			}
			else if (attempt > 0) {
				LocalProcesses.sleep(100L * attempt);
			}
			Process started;
			try {
				started = new ProcessBuilder(commandLine()).directory(this.dir.toFile())
					.redirectErrorStream(true)
					.redirectOutput(Redirect.appendTo(this.dir.resolve("stdout.log").toFile()))
					.start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot run " + this.binaries.server(), ex);
			}
			this.process = started;
			String problem = awaitReady(started);
			if (problem == null) {
				return;
			}
			LocalProcesses.end(started, 2000);
			this.process = null;
			failure = problem;
			// A fault test must know when its server was started more than once: clients
			// may have used the first one.
			System.out.printf("[redis] %s: start attempt %d failed (%s)%n", address(), attempt + 1, problem);
			if (!isBindFailure(problem)) {
				break;
			}
		}
		throw new IllegalStateException("redis-server did not start on " + address() + ": " + failure + "\n--- tail of "
				+ this.dir.resolve("redis.log") + " ---\n"
				+ LocalProcesses.tail(this.dir.resolve("redis.log"), LOG_TAIL_LINES) + "\n--- tail of "
				+ this.dir.resolve("stdout.log") + " ---\n"
				+ LocalProcesses.tail(this.dir.resolve("stdout.log"), LOG_TAIL_LINES));
	}

	private void pickPorts() {
		if (this.clusterNode && this.binaries.majorVersion() < 7) {
			// The cluster bus port is fixed at port + 10000 before Redis 7.
			for (int attempt = 0; attempt < 20; attempt++) {
				int candidate = LocalProcesses.freePort(65535 - 10000);
				if (LocalProcesses.isFree(candidate + 10000)) {
					this.port = candidate;
					this.busPort = candidate + 10000;
					return;
				}
			}
			throw new IllegalStateException("Found no free port pair (port, port + 10000) for a cluster node");
		}
		this.port = LocalProcesses.freePort();
		this.busPort = this.clusterNode ? LocalProcesses.freePort() : 0;
	}

	private List<String> commandLine() {
		List<String> command = new ArrayList<>(List.of(this.binaries.server().toString(), "--port",
				Integer.toString(this.port), "--bind", HOST, "--save", "", "--appendonly", "no", "--dir",
				this.dir.toString(), "--logfile", this.dir.resolve("redis.log").toString(), "--daemonize", "no"));
		if (this.binaries.majorVersion() >= 7) {
			command.addAll(List.of("--enable-debug-command", "yes"));
		}
		if (this.clusterNode) {
			command.addAll(List.of("--cluster-enabled", "yes", "--cluster-config-file",
					this.dir.resolve("nodes.conf").toString(), "--cluster-node-timeout",
					Integer.toString(this.clusterNodeTimeoutMillis)));
			if (this.binaries.majorVersion() >= 7) {
				command.addAll(List.of("--cluster-port", Integer.toString(this.busPort)));
			}
		}
		return command;
	}

	/**
	 * Waits until this very process answers {@code PING}.
	 * @return {@code null} when ready, else what went wrong
	 */
	private @Nullable String awaitReady(Process started) {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		Duration probeTimeout = Duration.ofMillis(250);
		while (System.nanoTime() < deadline) {
			if (!started.isAlive()) {
				return "the process exited with code " + exitValue(started);
			}
			try {
				if ("PONG".equals(Resp.call(HOST, this.port, probeTimeout, "PING"))) {
					String info = Resp.call(HOST, this.port, probeTimeout, "INFO", "server");
					if (info.contains("process_id:" + started.pid() + "\r\n")) {
						return null;
					}
					return "port " + this.port + " answers but from another process: Address already in use";
				}
			}
			catch (UncheckedIOException | RedisCommandException ex) {
				// not listening yet, or still loading
			}
			LocalProcesses.sleep(10);
		}
		return "it did not answer PING within " + STARTUP_TIMEOUT.toSeconds() + "s";
	}

	private boolean isBindFailure(String problem) {
		if (problem.contains("Address already in use")) {
			return true;
		}
		String log = LocalProcesses.tail(this.dir.resolve("redis.log"), LOG_TAIL_LINES)
				+ LocalProcesses.tail(this.dir.resolve("stdout.log"), LOG_TAIL_LINES);
		return log.contains("Address already in use") || log.contains("Could not create server TCP listening socket");
	}

	private static String exitValue(Process process) {
		try {
			process.waitFor(1, TimeUnit.SECONDS);
			return Integer.toString(process.exitValue());
		}
		catch (InterruptedException | IllegalThreadStateException ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			return "?";
		}
	}

}
