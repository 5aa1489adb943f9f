package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * Runs the rate limit script on Redis through one client library. The store decides what
 * to send and what the reply means; a runner owns the connection and the time limits: how
 * long a caller waits for the connection to be made, and how long Redis may take to
 * answer once a command is sent.
 */
interface ScriptRunner extends AutoCloseable {

	/**
	 * Connects and loads the script with {@code SCRIPT LOAD}.
	 * @return completes when both are done, or exceptionally with why not (Redis
	 * unreachable, the connect timeout passed, or a {@link ScriptRefusedException} when
	 * Redis answered but refused the script)
	 */
	CompletableFuture<Void> start();

	/**
	 * Sets what runs each time the runner's connection is made again after it dropped
	 * (the server may have restarted). A runner that cannot tell (a pool of a blocking
	 * client) never runs it: its callers find out through failed calls.
	 * @param listener runs on the thread that reconnected; must not block
	 */
	default void onReconnect(Runnable listener) {
	}

	/**
	 * Returns how many times the runner's connection was made again after it dropped: a
	 * decision that began before must not be sent on a connection made after, since its
	 * caller checked Redis for lost data before. A runner that cannot tell says
	 * {@code 0}.
	 * @return the count since the runner was created
	 */
	default long reconnects() {
		return 0;
	}

	/**
	 * Returns whether the runner's connection is known to be open. A runner that cannot
	 * tell (a pool of a blocking client) says {@code true}: its next call finds out.
	 * @return {@code false} once the runner knows its connection closed or never opened
	 */
	default boolean isConnected() {
		return true;
	}

	/**
	 * Returns whether one call may touch keys of any hash tag: every key lives on one
	 * Redis (standalone, Sentinel, master/replica), not spread over a Cluster's slots. A
	 * runner that cannot tell says {@code false}.
	 * @return {@code true} when the runner's connection is known to reach one Redis
	 */
	default boolean oneNode() {
		return false;
	}

	/**
	 * Runs the script with {@code EVALSHA}, loading it again after {@code NOSCRIPT}, for
	 * a caller that waits for the reply: a blocking client runs it on the caller's
	 * thread.
	 * @param keys the script's keys
	 * @param args the script's arguments
	 * @param lateReply told, on an I/O thread, of a reply that arrived after the returned
	 * future had completed without it (timed out, or completed by the caller), that is of
	 * a call that ran in Redis after its caller had moved on; {@code null} to ignore such
	 * replies. A runner that cannot read a reply after its timeout never calls it.
	 * @return the reply; completes exceptionally with a {@link ScriptTimeoutException}
	 * when there is no connection within the connect timeout or no reply within the
	 * command timeout, or with the client's exception when the connection is down
	 */
	CompletableFuture<List<Object>> run(String[] keys, String[] args, @Nullable Consumer<List<Object>> lateReply);

	/**
	 * Runs the script as {@link #run} does, never blocking the calling thread (an event
	 * loop may be calling).
	 * @param keys the script's keys
	 * @param args the script's arguments
	 * @param lateReply see {@link #run}
	 * @return the reply, as for {@link #run}
	 */
	default CompletableFuture<List<Object>> runAsync(String[] keys, String[] args,
			@Nullable Consumer<List<Object>> lateReply) {
		return run(keys, args, lateReply);
	}

	/**
	 * Returns {@code call}, failed with a {@link TimeoutException} if it is not complete
	 * within {@code nanos}: the safety net under the runner's own time limits, so that no
	 * caller waits for good. By default on the JDK's shared timer
	 * ({@link CompletableFuture#orTimeout}), whose queue takes a lock to schedule and to
	 * cancel a deadline. A runner whose calls complete on I/O threads that must not wait
	 * (Lettuce's) uses a timer that takes none.
	 * @param <T> the call's result
	 * @param call the call
	 * @param nanos the longest it may take
	 * @return {@code call}
	 */
	default <T> CompletableFuture<T> within(CompletableFuture<T> call, long nanos) {
		return call.orTimeout(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	void close();

	/**
	 * Returns the cause a {@link CompletableFuture} wrapped.
	 * @param ex what the future failed with
	 * @return the first cause that is not a {@link CompletionException} or an
	 * {@link ExecutionException}
	 */
	static Throwable unwrap(Throwable ex) {
		Throwable cause = ex;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	/**
	 * Makes a runner of the store's script and time limits.
	 */
	@FunctionalInterface
	interface Factory {

		/**
		 * Makes the runner; it connects on {@link ScriptRunner#start()} or its first
		 * call, not here.
		 * @param script the script
		 * @param connectTimeout how long a caller waits for a connection
		 * @param timeout how long Redis may take to answer a command once sent
		 * @return the runner
		 */
		ScriptRunner create(RedisRateLimitScript script, Duration connectTimeout, Duration timeout);

	}

}
