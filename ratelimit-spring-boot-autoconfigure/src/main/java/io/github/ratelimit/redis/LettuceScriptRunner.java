package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import org.jspecify.annotations.Nullable;

/**
 * Runs the rate limit script with {@code EVALSHA} on a connection of its own, made from
 * the application's Lettuce client (standalone, Sentinel or Cluster, as the user
 * configured it). After {@code NOSCRIPT} (Redis restarted, {@code SCRIPT FLUSH},
 * failover) the script is loaded again and the call retried once.
 * <p>
 * The connection is opened in the background, so a Redis that is down when the
 * application starts never blocks a caller; once open, Lettuce reconnects it on its own.
 */
final class LettuceScriptRunner implements AutoCloseable {

	private static final long RECONNECT_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	private final AbstractRedisClient client;

	private final RedisRateLimitScript script;

	private final ExecutorService connector;

	private final Object lock = new Object();

	private @Nullable CompletableFuture<Connection> connection;

	private long lastAttemptNanos;

	private volatile boolean closed;

	LettuceScriptRunner(AbstractRedisClient client, RedisRateLimitScript script) {
		if (!(client instanceof RedisClient) && !(client instanceof RedisClusterClient)) {
			throw new IllegalArgumentException("Unsupported Lettuce client " + client.getClass().getName());
		}
		this.client = client;
		this.script = script;
		this.connector = Executors.newSingleThreadExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "ratelimit-redis-connect");
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Connects and loads the script, waiting up to {@code wait}.
	 * @param wait how long to wait
	 * @return the SHA-1 Redis reported
	 */
	CompletableFuture<String> load(Duration wait) {
		return connection().thenCompose((c) -> c.commands.scriptLoad(this.script.source()))
			.toCompletableFuture()
			.orTimeout(wait.toNanos(), TimeUnit.NANOSECONDS);
	}

	/**
	 * Runs the script.
	 * @param keys the keys
	 * @param args the arguments
	 * @return the script's reply
	 */
	CompletableFuture<List<Object>> run(String[] keys, String[] args) {
		return connection().thenCompose((c) -> {
			if (!c.connection.isOpen()) {
				// Lettuce would queue the command until it reconnects and then run it,
				// taking
				// permits for a caller that has long given up: fail now instead.
				return CompletableFuture.failedFuture(new RedisConnectionException("Redis connection is down"));
			}
			return evalshaWithReload(c, keys, args);
		});
	}

	private CompletableFuture<List<Object>> evalshaWithReload(Connection c, String[] keys, String[] args) {
		return evalsha(c, keys, args).exceptionallyCompose((ex) -> {
			if (unwrap(ex) instanceof RedisNoScriptException) {
				return c.commands.scriptLoad(this.script.source()).thenCompose((sha) -> evalsha(c, keys, args));
			}
			return CompletableFuture.failedFuture(ex);
		}).toCompletableFuture();
	}

	private CompletionStage<List<Object>> evalsha(Connection connection, String[] keys, String[] args) {
		return connection.commands.<List<Object>>evalsha(this.script.sha1(), ScriptOutputType.MULTI, keys, args);
	}

	private CompletableFuture<Connection> connection() {
		CompletableFuture<Connection> current = this.connection;
		if (current != null && !current.isCompletedExceptionally()) {
			return current;
		}
		synchronized (this.lock) {
			current = this.connection;
			boolean failed = current != null && current.isCompletedExceptionally();
			if (current == null || (failed && System.nanoTime() - this.lastAttemptNanos > RECONNECT_INTERVAL_NANOS)) {
				if (this.closed) {
					return CompletableFuture.failedFuture(new IllegalStateException("Redis store is closed"));
				}
				this.lastAttemptNanos = System.nanoTime();
				current = CompletableFuture.supplyAsync(this::connect, this.connector);
				this.connection = current;
			}
			return current;
		}
	}

	private Connection connect() {
		if (this.client instanceof RedisClusterClient cluster) {
			StatefulRedisClusterConnection<String, String> connection = cluster.connect(StringCodec.UTF8);
			return new Connection(connection, connection.async());
		}
		StatefulRedisConnection<String, String> connection = ((RedisClient) this.client).connect(StringCodec.UTF8);
		return new Connection(connection, connection.async());
	}

	@Override
	public void close() {
		this.closed = true;
		CompletableFuture<Connection> current;
		synchronized (this.lock) {
			current = this.connection;
		}
		if (current != null) {
			current.thenAccept((c) -> c.connection.close());
		}
		this.connector.shutdownNow();
	}

	static Throwable unwrap(Throwable ex) {
		Throwable cause = ex;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private record Connection(StatefulConnection<String, String> connection,
			RedisClusterAsyncCommands<String, String> commands) {
	}

}
