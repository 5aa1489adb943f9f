package io.github.ratelimit.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
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
	 * unreachable, the connect timeout passed, the script refused)
	 */
	CompletableFuture<Void> start();

	/**
	 * Runs the script with {@code EVALSHA}, loading it again after {@code NOSCRIPT}.
	 * @param keys the script's keys
	 * @param args the script's arguments
	 * @param lateReply told, on an I/O thread, of a reply that arrived after the returned
	 * future had completed without it (timed out, or completed by the caller), that is of
	 * a call that ran in Redis after its caller had moved on; {@code null} to ignore such
	 * replies
	 * @return the reply; completes exceptionally with a {@link ScriptTimeoutException}
	 * when there is no connection within the connect timeout or no reply within the
	 * command timeout, or with the client's exception when the connection is down
	 */
	CompletableFuture<List<Object>> run(String[] keys, String[] args, @Nullable Consumer<List<Object>> lateReply);

	@Override
	void close();

}
