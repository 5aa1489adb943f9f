package io.github.ratelimit.testsupport.redis;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A real Redis server started for a test class, either a {@code redis-server} process or
 * a Docker container. Obtained from {@link RedisServerExtension#server()} or
 * {@link RedisCluster#nodes()}.
 * <p>
 * Every server runs without persistence ({@code --save "" --appendonly no}), so
 * {@link #stop()} followed by {@link #start()} (or {@link #restart()}) always comes back
 * empty, on the same port. {@code DEBUG} commands are enabled.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface RedisServer {

	/**
	 * How long {@link #command(String...)} waits to connect and for each read of the
	 * reply.
	 */
	Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(10);

	/**
	 * The host to connect to.
	 * @return the host, {@code 127.0.0.1} for a {@code redis-server} process
	 */
	String host();

	/**
	 * The port to connect to; it stays the same across {@link #stop()} and
	 * {@link #start()}. Never 6379.
	 * @return the port
	 */
	int port();

	/**
	 * The address as {@code host:port}.
	 * @return the address
	 */
	default String address() {
		return host() + ":" + port();
	}

	/**
	 * Stops the server: the process (or container) ends and the port is freed. A paused
	 * server is resumed first. Does nothing when it is already stopped.
	 */
	void stop();

	/**
	 * Starts the server again on the same port after {@link #stop()}, with an empty data
	 * set, and waits until it answers {@code PING}.
	 * @throws IllegalStateException if it is already running or cannot be started (the
	 * message includes the tail of the server's log)
	 */
	void start();

	/**
	 * {@link #stop()} and then {@link #start()}: the server comes back empty on the same
	 * port.
	 */
	default void restart() {
		stop();
		start();
	}

	/**
	 * Ends the server at once ({@code SIGKILL}), a paused one too without resuming it:
	 * what was sent to it and not yet read is never read, and the kernel closes its
	 * connections. {@link #start()} brings it back empty. A container is resumed first
	 * (Docker kills no paused container). Does nothing when it is already stopped.
	 */
	void kill();

	/**
	 * Freezes the server ({@code SIGSTOP} of the process, {@code docker pause} of a
	 * container): connections are still accepted but no command is answered until
	 * {@link #resume()}. Does nothing when it is already paused.
	 * @throws IllegalStateException if the server is not running
	 */
	void pause();

	/**
	 * Unfreezes a server after {@link #pause()}; commands sent meanwhile are answered
	 * now. Does nothing when it is not paused.
	 */
	void resume();

	/**
	 * Whether the server is running; a paused server is still running.
	 * @return whether the process (or container) is alive
	 */
	boolean isRunning();

	/**
	 * Whether the server is paused by {@link #pause()}.
	 * @return whether it is paused
	 */
	boolean isPaused();

	/**
	 * Runs one command on a new connection to this server, with
	 * {@link #DEFAULT_COMMAND_TIMEOUT}, and returns the reply as text.
	 * @param args the command and its arguments, e.g. {@code "SET", "k", "v"}
	 * @return the reply as text, see {@link #command(Duration, String...)}
	 * @throws RedisCommandException if Redis replies with an error
	 * @throws java.io.UncheckedIOException if the server cannot be reached or does not
	 * answer in time (the cause is then a {@link java.net.SocketTimeoutException})
	 */
	default String command(String... args) {
		return command(DEFAULT_COMMAND_TIMEOUT, args);
	}

	/**
	 * Runs one command on a new connection to this server and returns the reply as text,
	 * like {@code redis-cli --raw}: a status or bulk string as it is, an integer in
	 * decimal, a nil reply as the empty string, and the elements of an array each on its
	 * own line (separated by {@code \n}).
	 * @param timeout how long to wait to connect and for each read of the reply
	 * @param args the command and its arguments
	 * @return the reply as text
	 * @throws RedisCommandException if Redis replies with an error
	 * @throws java.io.UncheckedIOException if the server cannot be reached or does not
	 * answer in time (the cause is then a {@link java.net.SocketTimeoutException})
	 */
	default String command(Duration timeout, String... args) {
		return Resp.call(host(), port(), timeout, args);
	}

	/**
	 * Stalls the server with {@code DEBUG SLEEP}, sent on a thread of its own (the common
	 * pool has one worker on a 2-core machine, which others may hold), and returns once
	 * the server has stopped answering.
	 * @param duration how long the server sleeps, whole seconds
	 * @return completes with the reply ({@code OK}) when the server wakes up
	 * @throws IllegalStateException if the server still answers after 10 seconds
	 */
	default CompletableFuture<String> sleep(Duration duration) {
		CompletableFuture<String> sleep = new CompletableFuture<>();
		Thread sleeper = new Thread(() -> {
			try {
				sleep
					.complete(command(duration.plusSeconds(10), "DEBUG", "SLEEP", Long.toString(duration.toSeconds())));
			}
			catch (RuntimeException ex) {
				sleep.completeExceptionally(ex);
			}
		}, "debug-sleep");
		sleeper.start();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (System.nanoTime() - deadline < 0) {
			try {
				command(Duration.ofMillis(20), "PING");
			}
			catch (UncheckedIOException ex) {
				return sleep;
			}
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
		throw new IllegalStateException("Redis did not go to sleep");
	}

	/**
	 * Deletes every key in every database ({@code FLUSHALL}).
	 */
	default void flushAll() {
		command("FLUSHALL");
	}

}
