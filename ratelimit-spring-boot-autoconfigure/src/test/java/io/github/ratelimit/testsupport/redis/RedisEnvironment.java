package io.github.ratelimit.testsupport.redis;

import java.io.File;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.testcontainers.DockerClientFactory;

/**
 * Finds out what can provide Redis on this machine: a Docker engine (for Testcontainers)
 * or {@code redis-server} and {@code redis-cli} on the {@code PATH}. Every probe runs
 * once per JVM.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RedisEnvironment {

	/**
	 * System property that forces a backend: {@code binary}, {@code docker} or
	 * {@code auto} (the default: Docker when an engine answers, else the binary).
	 */
	static final String BACKEND_PROPERTY = "ratelimit-test.redis";

	static final String INSTALL_MESSAGE = "Redis tests need a redis-server binary on the PATH "
			+ "(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or a running Docker engine";

	static final String CLUSTER_INSTALL_MESSAGE = "Redis cluster tests need the redis-server and redis-cli binaries "
			+ "on the PATH (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis); "
			+ "the cluster is never started in Docker";

	private static final Pattern VERSION = Pattern.compile("v=(\\d+)\\.(\\d+)");

	private static @Nullable Boolean dockerAvailable;

	private static @Nullable Binaries binaries;

	private static boolean binariesProbed;

	private RedisEnvironment() {
	}

	/**
	 * Where standalone servers come from.
	 */
	enum Backend {

		/** A {@code redis-server} process. */
		BINARY,

		/** A Testcontainers container of {@code redis:7}. */
		DOCKER

	}

	/**
	 * The Redis binaries found on the {@code PATH}.
	 *
	 * @param server the {@code redis-server} executable
	 * @param cli the {@code redis-cli} executable, if any
	 * @param majorVersion the major version of {@code redis-server}
	 */
	record Binaries(Path server, @Nullable Path cli, int majorVersion) {

		/**
		 * The {@code redis-cli} executable.
		 * @return the path
		 * @throws IllegalStateException if there is none
		 */
		Path requireCli() {
			Path cli = cli();
			if (cli == null) {
				throw new IllegalStateException(CLUSTER_INSTALL_MESSAGE + " (redis-cli is missing)");
			}
			return cli;
		}

	}

	/**
	 * Chooses the backend for a standalone server, honouring {@value #BACKEND_PROPERTY}.
	 * @return the backend
	 * @throws IllegalStateException if none is available
	 */
	static Backend standaloneBackend() {
		String property = System.getProperty(BACKEND_PROPERTY, "auto");
		String choice = property.trim().toLowerCase(Locale.ROOT);
		if (choice.equals("binary")) {
			return choose(choice, false, binaries() != null);
		}
		if (choice.equals("docker")) {
			return choose(choice, dockerAvailable(true), false);
		}
		if (choice.isEmpty() || choice.equals("auto")) {
			boolean docker = dockerAvailable(false);
			return choose(choice, docker, !docker && binaries() != null);
		}
		return choose(property, false, false);
	}

	/**
	 * The decision of {@link #standaloneBackend()}, without probing.
	 * @param choice the value of {@value #BACKEND_PROPERTY}
	 * @param docker whether a Docker engine is available
	 * @param binary whether {@code redis-server} is on the {@code PATH}
	 * @return the backend
	 * @throws IllegalStateException if the chosen backend is not available
	 */
	static Backend choose(String choice, boolean docker, boolean binary) {
		switch (choice) {
			case "binary":
				if (!binary) {
					throw new IllegalStateException(
							BACKEND_PROPERTY + "=binary but there is no redis-server on the PATH. " + INSTALL_MESSAGE);
				}
				return Backend.BINARY;
			case "docker":
				if (!docker) {
					throw new IllegalStateException(BACKEND_PROPERTY
							+ "=docker but no Docker engine answered (Testcontainers cannot start containers). "
							+ INSTALL_MESSAGE);
				}
				return Backend.DOCKER;
			case "":
			case "auto":
				if (docker) {
					return Backend.DOCKER;
				}
				if (binary) {
					return Backend.BINARY;
				}
				throw new IllegalStateException(INSTALL_MESSAGE);
			default:
				throw new IllegalStateException(
						BACKEND_PROPERTY + " must be binary, docker or auto, but is '" + choice + "'");
		}
	}

	/**
	 * The binaries for a cluster.
	 * @return {@code redis-server} and {@code redis-cli}
	 * @throws IllegalStateException if either is missing
	 */
	static Binaries clusterBinaries() {
		Binaries found = binaries();
		if (found == null) {
			throw new IllegalStateException(CLUSTER_INSTALL_MESSAGE);
		}
		found.requireCli();
		return found;
	}

	/**
	 * The binaries for a standalone server.
	 * @return the binaries
	 * @throws IllegalStateException if {@code redis-server} is missing
	 */
	static Binaries standaloneBinaries() {
		Binaries found = binaries();
		if (found == null) {
			throw new IllegalStateException(INSTALL_MESSAGE);
		}
		return found;
	}

	/**
	 * The Redis binaries on the {@code PATH}, or {@code null} without
	 * {@code redis-server}.
	 * @return the binaries or {@code null}
	 */
	static synchronized @Nullable Binaries binaries() {
		if (!binariesProbed) {
			binariesProbed = true;
			Path server = onPath("redis-server");
			if (server != null) {
				binaries = new Binaries(server, onPath("redis-cli"), majorVersion(server));
			}
		}
		return binaries;
	}

	private static @Nullable Path onPath(String name) {
		String path = System.getenv("PATH");
		if (path == null) {
			return null;
		}
		for (String dir : path.split(File.pathSeparator)) {
			if (dir.isEmpty()) {
				continue;
			}
			Path candidate = Paths.get(dir, name);
			if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
				return candidate;
			}
		}
		return null;
	}

	private static int majorVersion(Path server) {
		try {
			Process process = new ProcessBuilder(server.toString(), "--version").redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(10, TimeUnit.SECONDS)) {
				process.destroyForcibly();
			}
			Matcher matcher = VERSION.matcher(output);
			return matcher.find() ? Integer.parseInt(matcher.group(1)) : 7;
		}
		catch (IOException ex) {
			return 7;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return 7;
		}
	}

	/**
	 * Whether a Docker engine is available to Testcontainers. Unless {@code force}, a
	 * quick probe of the usual Docker sockets comes first, so that a machine without an
	 * engine falls back at once, without Testcontainers' timeouts and log output.
	 * @param force whether to ask Testcontainers without the quick probe
	 * @return whether Docker is available
	 */
	static synchronized boolean dockerAvailable(boolean force) {
		if (dockerAvailable == null || (force && !dockerAvailable)) {
			boolean available = false;
			if (force || dockerEngineLikely()) {
				try {
					available = DockerClientFactory.instance().isDockerAvailable();
				}
				catch (RuntimeException | LinkageError ex) {
					available = false;
				}
			}
			dockerAvailable = available;
		}
		return dockerAvailable;
	}

	private static boolean dockerEngineLikely() {
		String dockerHost = System.getenv("DOCKER_HOST");
		if (dockerHost != null && !dockerHost.isBlank()) {
			return !dockerHost.startsWith("unix://") || pingsDocker(Paths.get(dockerHost.substring(7)));
		}
		Path home = Paths.get(System.getProperty("user.home", "/"));
		if (Files.exists(home.resolve(".testcontainers.properties"))
				|| System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("win")) {
			// Testcontainers is configured explicitly, or the engine is behind a named
			// pipe: let Testcontainers decide.
			return true;
		}
		List<Path> sockets = new ArrayList<>();
		sockets.add(Paths.get("/var/run/docker.sock"));
		String runtimeDir = System.getenv("XDG_RUNTIME_DIR");
		if (runtimeDir != null && !runtimeDir.isBlank()) {
			sockets.add(Paths.get(runtimeDir, "docker.sock"));
			sockets.add(Paths.get(runtimeDir, ".docker", "run", "docker.sock"));
		}
		sockets.add(home.resolve(".docker/run/docker.sock"));
		sockets.add(home.resolve(".docker/desktop/docker.sock"));
		sockets.add(home.resolve(".colima/default/docker.sock"));
		sockets.add(home.resolve(".colima/docker.sock"));
		sockets.add(home.resolve(".rd/docker.sock"));
		sockets.add(home.resolve(".orbstack/run/docker.sock"));
		for (Path socket : sockets) {
			if (Files.exists(socket) && pingsDocker(socket)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Sends {@code GET /_ping} to a Docker socket and waits at most two seconds for an
	 * HTTP 200.
	 */
	private static boolean pingsDocker(Path socket) {
		try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
				Selector selector = Selector.open()) {
			channel.connect(UnixDomainSocketAddress.of(socket));
			channel.write(
					ByteBuffer.wrap("GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
			channel.configureBlocking(false);
			channel.register(selector, SelectionKey.OP_READ);
			ByteBuffer buffer = ByteBuffer.allocate(64);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
			while (buffer.position() < 12) {
				long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
				if (left <= 0) {
					return false;
				}
				selector.select(left);
				selector.selectedKeys().clear();
				if (channel.read(buffer) < 0) {
					break;
				}
			}
			String status = new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII);
			return status.startsWith("HTTP/1.") && status.contains(" 200");
		}
		catch (IOException | RuntimeException ex) {
			return false;
		}
	}

}
