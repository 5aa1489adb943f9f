package io.github.ratelimit.testsupport.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Helpers for the processes this package starts: free ports, signals by PID, temp
 * directories, log tails, and the JVM shutdown hook that ends whatever is still running.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class LocalProcesses {

	/** The port of a Redis that may already run on this machine: never used. */
	static final int DEFAULT_REDIS_PORT = 6379;

	/** How many test JVMs of one module run at once; set by the build. */
	static final String FORKS_PROPERTY = "ratelimit-test.forks";

	/** Which of them this one is, counted from 1; set by the build. */
	static final String FORK_PROPERTY = "ratelimit-test.fork";

	private static final Set<Integer> handedOut = ConcurrentHashMap.newKeySet();

	private static final Set<Disposable> live = ConcurrentHashMap.newKeySet();

	private static boolean hookInstalled;

	private LocalProcesses() {
	}

	/**
	 * Something that must not outlive the JVM.
	 */
	interface Disposable {

		/**
		 * Ends it at once, without waiting for locks held by a test thread.
		 */
		void dispose();

	}

	/**
	 * Picks a free loopback port by binding a {@link ServerSocket} to port 0. Never
	 * returns 6379 (nor 16379, its cluster bus port) nor a port already handed out by
	 * this JVM, nor one that another test JVM of the same build may hand out (see
	 * {@link #isThisForksPort(int)}).
	 * @param maxPort the highest acceptable port
	 * @return the port
	 */
	static int freePort(int maxPort) {
		for (int attempt = 0; attempt < 200; attempt++) {
			int port;
			try (ServerSocket socket = new ServerSocket()) {
				socket.setReuseAddress(false);
				socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
				port = socket.getLocalPort();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot bind a free port on 127.0.0.1", ex);
			}
			if (port != DEFAULT_REDIS_PORT && port != DEFAULT_REDIS_PORT + 10000 && port <= maxPort
					&& isThisForksPort(port) && handedOut.add(port)) {
				return port;
			}
		}
		throw new IllegalStateException("Found no free port on 127.0.0.1 up to " + maxPort);
	}

	/**
	 * Whether a port belongs to this test JVM's share of the ports. Surefire may run a
	 * module's test classes in several JVMs at once ({@code ratelimit-test.forks}, fork
	 * {@code ratelimit-test.fork} counted from 1); each JVM takes only ports whose pair
	 * number ({@code port / 2}: the kernel hands out ports of one parity first) is its
	 * own modulo the number of JVMs. A server restarted on its port after a stop must
	 * find it free: no other fork can have picked it in the meantime.
	 * @param port the port
	 * @return whether this JVM may hand it out
	 */
	static boolean isThisForksPort(int port) {
		int forks = Integer.getInteger(FORKS_PROPERTY, 1);
		int fork = Integer.getInteger(FORK_PROPERTY, 1);
		return forks <= 1 || (port / 2) % forks == (fork - 1) % forks;
	}

	/**
	 * Picks a free loopback port.
	 * @return the port
	 * @see #freePort(int)
	 */
	static int freePort() {
		return freePort(65535);
	}

	/**
	 * Whether a loopback port can be bound right now.
	 * @param port the port
	 * @return whether it is free
	 */
	static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Sends a signal to one process by its PID with {@code kill -SIG pid}.
	 * @param pid the PID of a process this package started
	 * @param signal the signal name, e.g. {@code STOP}
	 */
	static void signal(long pid, String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true)
				.start();
			String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!kill.waitFor(10, TimeUnit.SECONDS)) {
				kill.destroyForcibly();
				throw new IllegalStateException("kill -" + signal + " " + pid + " did not finish");
			}
			if (kill.exitValue() != 0) {
				throw new IllegalStateException(
						"kill -" + signal + " " + pid + " failed (" + kill.exitValue() + "): " + output.trim());
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run kill -" + signal + " " + pid, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while sending " + signal + " to " + pid, ex);
		}
	}

	/**
	 * Waits until {@code /proc/<pid>/stat} shows the process stopped (state {@code T}) or
	 * not, for at most two seconds. Without {@code /proc} it just pauses briefly.
	 * @param pid the PID
	 * @param stopped the state to wait for
	 */
	static void awaitStopped(long pid, boolean stopped) {
		Path stat = Paths.get("/proc", Long.toString(pid), "stat");
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
		while (System.nanoTime() < deadline) {
			String state;
			try {
				String text = Files.readString(stat, StandardCharsets.US_ASCII);
				int end = text.lastIndexOf(')');
				state = text.substring(end + 2, end + 3);
			}
			catch (IOException | RuntimeException ex) {
				sleep(50);
				return;
			}
			if (state.equals("T") == stopped) {
				return;
			}
			sleep(5);
		}
	}

	/**
	 * Ends a process this package started, by its handle (never by name): SIGTERM
	 * ({@link Process#destroy()}), then SIGKILL after a grace period; processes it forked
	 * are ended too.
	 * @param process the process
	 * @param graceMillis how long to wait after SIGTERM
	 */
	static void end(Process process, long graceMillis) {
		List<ProcessHandle> children = new ArrayList<>();
		process.descendants().forEach(children::add);
		process.destroy();
		try {
			if (!process.waitFor(graceMillis, TimeUnit.MILLISECONDS)) {
				process.destroyForcibly();
				process.waitFor(5, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			process.destroyForcibly();
			Thread.currentThread().interrupt();
		}
		for (ProcessHandle child : children) {
			if (child.isAlive()) {
				child.destroyForcibly();
			}
		}
	}

	/**
	 * Creates a temp directory for one server.
	 * @param prefix the name prefix
	 * @return the directory
	 */
	static Path tempDir(String prefix) {
		try {
			return Files.createTempDirectory(prefix);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create a temp directory", ex);
		}
	}

	/**
	 * Deletes a directory and everything in it, ignoring failures.
	 * @param dir the directory
	 */
	static void deleteRecursively(Path dir) {
		if (!Files.exists(dir)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(dir)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> {
				try {
					Files.deleteIfExists(path);
				}
				catch (IOException ex) {
					// best effort
				}
			});
		}
		catch (IOException | UncheckedIOException ex) {
			// best effort
		}
	}

	/**
	 * The last lines of a log file, or a note that there is none.
	 * @param file the file
	 * @param lines how many lines
	 * @return the tail
	 */
	static String tail(Path file, int lines) {
		try {
			List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
			return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
		}
		catch (IOException | UncheckedIOException ex) {
			return "(no " + file + ")";
		}
	}

	/**
	 * Registers something to dispose of in the JVM shutdown hook.
	 * @param disposable what to end when the JVM exits
	 */
	static void register(Disposable disposable) {
		synchronized (LocalProcesses.class) {
			if (!hookInstalled) {
				Runtime.getRuntime()
					.addShutdownHook(new Thread(LocalProcesses::disposeAll, "ratelimit-test-redis-cleanup"));
				hookInstalled = true;
			}
		}
		live.add(disposable);
	}

	/**
	 * Forgets something disposed of already.
	 * @param disposable what was registered
	 */
	static void unregister(Disposable disposable) {
		live.remove(disposable);
	}

	private static void disposeAll() {
		for (Disposable disposable : live) {
			try {
				disposable.dispose();
			}
			catch (RuntimeException ex) {
				// keep going: the JVM is exiting
			}
		}
		live.clear();
	}

	/**
	 * Sleeps, keeping the interrupt flag.
	 * @param millis how long
	 */
	static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
