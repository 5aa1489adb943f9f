package io.github.ratelimit.testsupport.redis;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import org.jspecify.annotations.Nullable;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A {@code redis:7} container started with Testcontainers. Its port 6379 is published on
 * a fixed, free host port, so that it stays the same when the container is stopped and
 * started again with the Docker API.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ContainerRedisServer implements RedisServer, LocalProcesses.Disposable {

	static final DockerImageName IMAGE = DockerImageName.parse("redis:7");

	private static final int CONTAINER_PORT = 6379;

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(60);

	private final GenericContainer<?> container;

	private final int port;

	private final Object lock = new Object();

	private volatile boolean stopped;

	private volatile boolean paused;

	private ContainerRedisServer(GenericContainer<?> container, int port) {
		this.container = container;
		this.port = port;
	}

	/**
	 * Starts a container on a free host port.
	 * @return the running server
	 */
	static ContainerRedisServer startNew() {
		@Nullable RuntimeException failure = null;
		for (int attempt = 0; attempt < 3; attempt++) {
			int hostPort = LocalProcesses.freePort();
			GenericContainer<?> container = new GenericContainer<>(IMAGE)
				.withCommand("redis-server", "--save", "", "--appendonly", "no", "--protected-mode", "no", "--dir",
						"/data", "--enable-debug-command", "yes")
				.withCreateContainerCmdModifier((cmd) -> {
					HostConfig hostConfig = (cmd.getHostConfig() != null) ? cmd.getHostConfig() : new HostConfig();
					hostConfig.withPortBindings(
							new PortBinding(Ports.Binding.bindPort(hostPort), ExposedPort.tcp(CONTAINER_PORT)));
					cmd.withHostConfig(hostConfig).withExposedPorts(ExposedPort.tcp(CONTAINER_PORT));
				})
				.waitingFor(
						Wait.forLogMessage(".*Ready to accept connections.*", 1).withStartupTimeout(STARTUP_TIMEOUT));
			ContainerRedisServer server = new ContainerRedisServer(container, hostPort);
			LocalProcesses.register(server);
			try {
				container.start();
				server.awaitPing();
				return server;
			}
			catch (RuntimeException ex) {
				failure = ex;
				server.close();
			}
		}
		throw new IllegalStateException("Could not start a " + IMAGE + " container: " + failure, failure);
	}

	@Override
	public String host() {
		return this.container.getHost();
	}

	@Override
	public int port() {
		return this.port;
	}

	@Override
	public void stop() {
		end(() -> docker().stopContainerCmd(id()).withTimeout(5).exec());
	}

	@Override
	public void kill() {
		end(() -> docker().killContainerCmd(id()).exec());
	}

	/** Ends the container with {@code end}, resumed first: Docker ends no paused one. */
	private void end(Runnable end) {
		synchronized (this.lock) {
			if (this.stopped) {
				return;
			}
			if (this.paused) {
				docker().unpauseContainerCmd(id()).exec();
				this.paused = false;
			}
			end.run();
			this.stopped = true;
		}
	}

	@Override
	public void start() {
		synchronized (this.lock) {
			if (!this.stopped) {
				throw new IllegalStateException("Redis container " + address() + " is already running");
			}
			try {
				docker().startContainerCmd(id()).exec();
			}
			catch (RuntimeException ex) {
				throw new IllegalStateException("Redis container did not start on " + address() + ": " + ex.getMessage()
						+ "\n--- tail of the container log ---\n" + logTail(), ex);
			}
			this.stopped = false;
			awaitPing();
		}
	}

	@Override
	public void pause() {
		synchronized (this.lock) {
			if (this.stopped) {
				throw new IllegalStateException("Cannot pause Redis container " + address() + ": not running");
			}
			if (!this.paused) {
				docker().pauseContainerCmd(id()).exec();
				this.paused = true;
			}
		}
	}

	@Override
	public void resume() {
		synchronized (this.lock) {
			if (this.paused) {
				docker().unpauseContainerCmd(id()).exec();
				this.paused = false;
			}
		}
	}

	@Override
	public boolean isRunning() {
		if (this.stopped) {
			return false;
		}
		try {
			InspectContainerResponse.ContainerState state = docker().inspectContainerCmd(id()).exec().getState();
			return Boolean.TRUE.equals(state.getRunning());
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	@Override
	public boolean isPaused() {
		return this.paused;
	}

	/**
	 * Removes the container.
	 */
	void close() {
		synchronized (this.lock) {
			dispose();
		}
	}

	@Override
	public void dispose() {
		try {
			if (this.paused) {
				docker().unpauseContainerCmd(id()).exec();
			}
		}
		catch (RuntimeException ex) {
			// removed below anyway
		}
		this.paused = false;
		this.stopped = true;
		try {
			this.container.stop();
		}
		finally {
			LocalProcesses.unregister(this);
		}
	}

	@Override
	public String toString() {
		return "Redis container " + IMAGE + " on port " + this.port;
	}

	private String id() {
		return this.container.getContainerId();
	}

	private static DockerClient docker() {
		return DockerClientFactory.instance().client();
	}

	private void awaitPing() {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		@Nullable RuntimeException last = null;
		while (System.nanoTime() < deadline) {
			try {
				if ("PONG".equals(Resp.call(host(), this.port, Duration.ofMillis(500), "PING"))) {
					return;
				}
			}
			catch (UncheckedIOException | RedisCommandException ex) {
				last = ex;
			}
			LocalProcesses.sleep(50);
		}
		throw new IllegalStateException("Redis container did not start on " + address() + ": no answer to PING within "
				+ STARTUP_TIMEOUT.toSeconds() + "s (" + last + ")\n--- tail of the container log ---\n" + logTail());
	}

	private String logTail() {
		try {
			List<String> logs = Arrays.asList(this.container.getLogs().split("\n"));
			return String.join("\n", logs.subList(Math.max(0, logs.size() - 40), logs.size()));
		}
		catch (RuntimeException ex) {
			return "(no log: " + ex.getMessage() + ")";
		}
	}

}
