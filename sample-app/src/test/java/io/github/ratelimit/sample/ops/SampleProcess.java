package io.github.ratelimit.sample.ops;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.JsonPath;
import org.jspecify.annotations.Nullable;

/**
 * The sample application as an operator runs it: {@code java -jar} of the repackaged jar,
 * a JVM of its own, command-line arguments, a log file. Stopped (and killed if it does
 * not stop) when closed.
 */
final class SampleProcess implements AutoCloseable {

	private final String name;

	private final int port;

	private final Process process;

	private final Path log;

	private SampleProcess(String name, int port, Process process, Path log) {
		this.name = name;
		this.port = port;
		this.process = process;
		this.log = log;
	}

	/**
	 * Starts the jar on a free port; returns at once.
	 * @param jar the repackaged sample application
	 * @param name a name, for the log file and messages
	 * @param logs the directory for the log file
	 * @param args command-line arguments
	 * @return the starting process
	 */
	static SampleProcess start(Path jar, String name, Path logs, List<String> args) {
		int port = freePort();
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.add("-Xmx256m");
		command.add("-jar");
		command.add(jar.toString());
		command.add("--server.port=" + port);
		command.addAll(args);
		Path log = logs.resolve(name + ".log");
		try {
			Files.createDirectories(logs);
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
			return new SampleProcess(name, port, process, log);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + command, ex);
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	int port() {
		return this.port;
	}

	Path log() {
		return this.log;
	}

	/**
	 * Waits until the application answers HTTP.
	 * @param limit the longest wait
	 */
	void awaitAnswering(Duration limit) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (System.nanoTime() - deadline < 0) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException(
						this.name + " exited with " + this.process.exitValue() + "; see " + this.log);
			}
			if (healthJson() != null) {
				return;
			}
			pause(100);
		}
		throw new IllegalStateException(this.name + " did not answer within " + limit + "; see " + this.log);
	}

	/**
	 * Returns the {@code ratelimit} health component ({@code /actuator/health/ratelimit},
	 * which asks no other indicator: Spring Boot's own Redis indicator can take seconds
	 * to give up on a Redis that is down): status, state and breaker.
	 * @return e.g. {@code UP/healthy/closed}
	 */
	String rateLimitHealth() {
		String json = healthJson();
		if (json == null) {
			throw new IllegalStateException(this.name + " does not answer");
		}
		return JsonPath.read(json, "$.status") + "/" + JsonPath.read(json, "$.details.state") + "/"
				+ JsonPath.read(json, "$.details.breaker");
	}

	private @Nullable String healthJson() {
		HttpRequest request = HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/health/ratelimit"))
			.timeout(Duration.ofSeconds(20))
			.build();
		try {
			HttpResponse<String> response = SampleInstance.HTTP.send(request, HttpResponse.BodyHandlers.ofString());
			return response.body();
		}
		catch (IOException ex) {
			// Not answering (yet)
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Sends a {@code GET} as client {@code clientIp}.
	 * @param path the path
	 * @param clientIp the {@code X-Forwarded-For} value, the client's address for an
	 * instance that trusts 127.0.0.1 as a proxy
	 * ({@code --ratelimit.client-ip.trusted-proxies=127.0.0.1})
	 * @return the status
	 */
	int get(String path, String clientIp) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("X-Forwarded-For", clientIp)
			.timeout(Duration.ofSeconds(20))
			.build();
		try {
			return SampleInstance.HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("GET " + path + " on " + this.name + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Sends a {@code DELETE}, e.g. a key's reset through the actuator endpoint.
	 * @param path the path
	 * @return the status
	 */
	int delete(String path) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.DELETE()
			.timeout(Duration.ofSeconds(20))
			.build();
		try {
			return SampleInstance.HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("DELETE " + path + " on " + this.name + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Sends a request with a JSON body, e.g. a live limit change through the actuator
	 * endpoint.
	 * @param method e.g. {@code POST}
	 * @param path the path
	 * @param json the body
	 * @return the response
	 */
	HttpResponse<String> send(String method, String path, String json) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Content-Type", "application/json")
			.method(method, HttpRequest.BodyPublishers.ofString(json))
			.timeout(Duration.ofSeconds(20))
			.build();
		try {
			return SampleInstance.HTTP.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(method + " " + path + " on " + this.name + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Returns the body of a {@code GET}, e.g. the actuator endpoint's listing.
	 * @param path the path
	 * @return the body
	 */
	String read(String path) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(20))
			.build();
		try {
			return SampleInstance.HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("GET " + path + " on " + this.name + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Returns the log lines that contain {@code text}.
	 * @param text what to look for
	 * @return the lines
	 */
	List<String> logLines(String text) {
		try {
			return Files.readAllLines(this.log).stream().filter((line) -> line.contains(text)).toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Sends the JVM a signal with {@code kill}, e.g. {@code STOP} to freeze it (as a long
	 * pause would) and {@code CONT} to resume it.
	 * @param signal the signal's name
	 */
	void signal(String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid())).inheritIO()
				.start();
			if (!kill.waitFor(20, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " of " + this.name + " failed");
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Kills the JVM at once, as {@code kill -9} does: nothing of it runs any more.
	 */
	void killHard() {
		this.process.destroyForcibly();
		try {
			this.process.waitFor(20, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		this.process.destroy();
		try {
			if (!this.process.waitFor(20, TimeUnit.SECONDS)) {
				this.process.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			this.process.destroyForcibly();
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public String toString() {
		return this.name + " (pid " + this.process.pid() + ", port " + this.port + ")";
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
