package io.github.ratelimit.redis;

import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.store.RateLimitStoreException;

/**
 * Runs the rate limit script through Spring Data Redis, for any client but Lettuce
 * (Jedis, standalone, Sentinel or Cluster): {@code EVALSHA} on a connection of the
 * factory, and after {@code NOSCRIPT} (Redis restarted, {@code SCRIPT FLUSH}, failover)
 * the call again with {@code EVAL}, which also caches the script.
 * <p>
 * Time limits. A blocking client runs a call on the caller's thread, so the command
 * timeout must be the client's own: on Jedis the runner makes a
 * {@link JedisConnectionFactory} of its own from the application's settings (servers,
 * credentials, SSL, database, client name, pool sizes), with the store's timeout as the
 * socket read timeout, the connect timeout as the connect timeout and as the longest wait
 * for a pooled connection. The read timeout is checked on the socket: after its deadline
 * the socket is read once more before the call fails, so time this process spends unable
 * to run counts against no one, as on the Lettuce path. On another client the runner uses
 * the application's factory with that client's timeouts.
 * <p>
 * Failures are told apart by their cause, not by Spring's exception type (Jedis reports
 * both as {@code RedisConnectionFailureException}): a socket timeout (read, or connect)
 * or a pool wait that ran out is a {@link ScriptTimeoutException}, a slow Redis; a
 * refused or reset connection stays the client's exception, a dead one.
 * <p>
 * {@link #runAsync} never blocks its caller: calls run on a bounded pool of daemon
 * threads ({@code ratelimit-redis-N}, as many as the connection pool's largest size, with
 * a queue of {@value #QUEUE} calls). A call that finds the queue full fails at once, and
 * a queued call whose caller has given up on it is not sent.
 * <p>
 * Unlike the Lettuce path, a reply that comes after the timeout is never read (the socket
 * is closed with the timeout), so a decision that ran in Redis after its caller moved on
 * keeps its permits until they refill.
 */
final class SpringDataRedisScriptRunner implements ScriptRunner {

	private static final Log logger = LogFactory.getLog(SpringDataRedisScriptRunner.class);

	private static final boolean JEDIS_PRESENT = ClassUtils.isPresent("redis.clients.jedis.Jedis",
			SpringDataRedisScriptRunner.class.getClassLoader());

	/** Calls {@link #runAsync} may queue, at most. */
	static final int QUEUE = 1024;

	/** Threads for {@link #runAsync} when the client's pool size is unknown. */
	private static final int DEFAULT_THREADS = 16;

	private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	private static final AtomicInteger threadIds = new AtomicInteger();

	private final Connections connections;

	private final RedisRateLimitScript script;

	private final byte[] source;

	private final ThreadPoolExecutor executor;

	private final DownClusterMasters downMasters = new DownClusterMasters(System::nanoTime);

	/**
	 * Creates a runner; nothing connects before {@link #start()} or the first call.
	 */
	private SpringDataRedisScriptRunner(Connections connections, RedisRateLimitScript script, int threads) {
		this.connections = connections;
		this.script = script;
		this.source = script.source().getBytes(StandardCharsets.UTF_8);
		this.executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE),
				(runnable) -> {
					Thread thread = new Thread(runnable, "ratelimit-redis-" + threadIds.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		this.executor.allowCoreThreadTimeOut(true);
	}

	/**
	 * Runners on {@code connectionFactory}: on a {@link JedisConnectionFactory}, on a
	 * factory of their own with the store's timeouts; on any other, on
	 * {@code connectionFactory} itself.
	 * @param connectionFactory the application's connection factory
	 * @return the runner factory
	 */
	static ScriptRunner.Factory on(RedisConnectionFactory connectionFactory) {
		return (script, connectTimeout, timeout) -> {
			if (JEDIS_PRESENT && connectionFactory instanceof JedisConnectionFactory jedis) {
				return new SpringDataRedisScriptRunner(
						new OwnConnections(() -> JedisConnectionFactories.copy(jedis, connectTimeout, timeout)), script,
						JedisConnectionFactories.maxConnections(jedis, DEFAULT_THREADS));
			}
			return new SpringDataRedisScriptRunner(new SharedConnections(connectionFactory), script, DEFAULT_THREADS);
		};
	}

	@Override
	public CompletableFuture<Void> start() {
		CompletableFuture<Void> started = new CompletableFuture<>();
		Thread starter = new Thread(() -> {
			try {
				try (RedisConnection connection = this.connections.connection()) {
					connection.scriptingCommands().scriptLoad(this.source);
				}
				started.complete(null);
			}
			catch (RuntimeException ex) {
				started.completeExceptionally(errorReply(ex) ? new ScriptRefusedException(ex) : failure(ex));
			}
		}, "ratelimit-redis-connect");
		starter.setDaemon(true);
		starter.start();
		return started;
	}

	@Override
	public CompletableFuture<List<Object>> run(String[] keys, String[] args,
			@Nullable Consumer<List<Object>> lateReply) {
		return call(keys, args);
	}

	@Override
	public CompletableFuture<List<Object>> runAsync(String[] keys, String[] args,
			@Nullable Consumer<List<Object>> lateReply) {
		CompletableFuture<List<Object>> reply = new CompletableFuture<>();
		try {
			this.executor.execute(() -> {
				if (reply.isDone()) {
					// Its caller gave up while it was queued: sending it now would take
					// permits no one gets.
					return;
				}
				call(keys, args).whenComplete((result, ex) -> {
					if (ex != null) {
						reply.completeExceptionally(ex);
					}
					else {
						reply.complete(result);
					}
				});
			});
		}
		catch (RejectedExecutionException ex) {
			reply.completeExceptionally(this.executor.isShutdown() ? new IllegalStateException("Redis store is closed")
					: new RateLimitStoreException("Too many asynchronous Redis rate limit calls: " + QUEUE
							+ " already wait for one of " + this.executor.getMaximumPoolSize() + " threads", ex,
							false));
		}
		return reply;
	}

	/**
	 * Runs the script on the calling thread.
	 * @return the reply, completed; or failed with a {@link ScriptTimeoutException} when
	 * the connection or the reply took too long, with the client's exception when the
	 * call failed otherwise
	 */
	private CompletableFuture<List<Object>> call(String[] keys, String[] args) {
		byte[][] keysAndArgs = new byte[keys.length + args.length][];
		for (int i = 0; i < keys.length; i++) {
			keysAndArgs[i] = keys[i].getBytes(StandardCharsets.UTF_8);
		}
		for (int i = 0; i < args.length; i++) {
			keysAndArgs[keys.length + i] = args[i].getBytes(StandardCharsets.UTF_8);
		}
		try (RedisConnection connection = this.connections.connection()) {
			if (connection instanceof RedisClusterConnection cluster && keys.length > 0) {
				return callCluster(cluster, keys.length, keysAndArgs);
			}
			return CompletableFuture.completedFuture(evalSha(connection.scriptingCommands(), keys.length, keysAndArgs));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(failure(ex));
		}
	}

	/**
	 * Runs the script on a cluster connection, unless the master of the key's slot is
	 * known down: then the call fails at once, and calls for other masters' slots are
	 * sent (see {@link DownClusterMasters}).
	 */
	private CompletableFuture<List<Object>> callCluster(RedisClusterConnection cluster, int keys,
			byte[][] keysAndArgs) {
		String master = this.downMasters.any() ? DownClusterMasters.masterOf(cluster, keysAndArgs[0]) : null;
		if (master != null && !this.downMasters.maySend(master)) {
			return CompletableFuture.failedFuture(new ClusterMasterDownException("Redis Cluster master " + master
					+ " of the key's slot is down (calls for other masters' slots are sent)"));
		}
		List<Object> reply;
		try {
			reply = evalSha(cluster.scriptingCommands(), keys, keysAndArgs);
		}
		catch (RuntimeException ex) {
			Throwable connectFailure = DownClusterMasters.connectFailure(ex);
			String down = (connectFailure == null) ? null
					: (master != null) ? master : DownClusterMasters.masterOf(cluster, keysAndArgs[0]);
			if (connectFailure == null || down == null) {
				throw ex;
			}
			this.downMasters.down(down, connectFailure);
			return CompletableFuture.failedFuture(new ClusterMasterDownException(
					"Redis Cluster master " + down + " of the key's slot is down (" + connectFailure + ")"));
		}
		if (master != null) {
			this.downMasters.up(master);
		}
		return CompletableFuture.completedFuture(reply);
	}

	private List<Object> evalSha(RedisScriptingCommands scripting, int keys, byte[][] keysAndArgs) {
		try {
			return scripting.evalSha(this.script.sha1(), ReturnType.MULTI, keys, keysAndArgs);
		}
		catch (DataAccessException ex) {
			if (!noScript(ex)) {
				throw ex;
			}
			// EVAL runs the script on the server of the key, and caches it there for the
			// next EVALSHA. SCRIPT LOAD on a cluster connection goes to the masters the
			// topology knows, which once missed a master just restarted for almost a
			// second.
			return scripting.eval(this.source, ReturnType.MULTI, keys, keysAndArgs);
		}
	}

	/**
	 * What a failed call completes with: a {@link ScriptTimeoutException} for a slow
	 * Redis, the client's exception for a dead one. A read that timed out is a slow
	 * reply, also when it was a new connection's handshake (Jedis sends commands as it
	 * connects).
	 */
	static Throwable failure(RuntimeException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SocketTimeoutException timeout) {
				String message = (timeout.getMessage() != null) ? timeout.getMessage().toLowerCase(Locale.ROOT) : "";
				return new ScriptTimeoutException(message.contains("connect") ? ScriptTimeoutException.Wait.CONNECTION
						: ScriptTimeoutException.Wait.REPLY, ex);
			}
			if (cause instanceof NoSuchElementException && cause.getMessage() != null
					&& cause.getMessage().startsWith("Timeout waiting")) {
				// Every pooled connection stayed in use for the connect timeout.
				return new ScriptTimeoutException(ScriptTimeoutException.Wait.CONNECTION, ex);
			}
			if (cause instanceof QueryTimeoutException) {
				return new ScriptTimeoutException(ScriptTimeoutException.Wait.REPLY, ex);
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return ex;
	}

	/** Whether Redis answered with an error, rather than not at all. */
	private static boolean errorReply(RuntimeException ex) {
		return ex instanceof DataAccessException && !(ex instanceof DataAccessResourceFailureException)
				&& !(ex instanceof TransientDataAccessException);
	}

	private static boolean noScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT")) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
		this.connections.close();
	}

	/**
	 * Where the runner's connections come from.
	 */
	private interface Connections extends AutoCloseable {

		RedisConnection connection();

		@Override
		void close();

	}

	/**
	 * The application's factory, which Spring manages.
	 */
	private record SharedConnections(RedisConnectionFactory factory) implements Connections {

		@Override
		public RedisConnection connection() {
			return this.factory.getConnection();
		}

		@Override
		public void close() {
		}

	}

	/**
	 * A factory of the runner's own, made on first use. One that failed to start (a
	 * cluster finds its topology when it starts) is dropped and made again on a later
	 * call, at most one attempt every 500ms; calls in between fail at once.
	 */
	private static final class OwnConnections implements Connections {

		private final Supplier<JedisConnectionFactory> factories;

		private volatile @Nullable JedisConnectionFactory factory;

		private @Nullable RuntimeException lastFailure;

		private long lastAttemptNanos;

		private boolean closed;

		OwnConnections(Supplier<JedisConnectionFactory> factories) {
			this.factories = factories;
		}

		@Override
		public RedisConnection connection() {
			JedisConnectionFactory factory = this.factory;
			return ((factory != null) ? factory : start()).getConnection();
		}

		private synchronized JedisConnectionFactory start() {
			if (this.closed) {
				throw new IllegalStateException("Redis store is closed");
			}
			JedisConnectionFactory factory = this.factory;
			if (factory != null) {
				return factory;
			}
			long now = System.nanoTime();
			RuntimeException lastFailure = this.lastFailure;
			if (lastFailure != null && now - this.lastAttemptNanos < RETRY_NANOS) {
				throw lastFailure;
			}
			this.lastAttemptNanos = now;
			factory = this.factories.get();
			try {
				factory.afterPropertiesSet();
				factory.start();
			}
			catch (RuntimeException ex) {
				this.lastFailure = ex;
				destroy(factory);
				throw ex;
			}
			this.lastFailure = null;
			this.factory = factory;
			return factory;
		}

		@Override
		public synchronized void close() {
			this.closed = true;
			JedisConnectionFactory factory = this.factory;
			this.factory = null;
			if (factory != null) {
				destroy(factory);
			}
		}

		private static void destroy(JedisConnectionFactory factory) {
			try {
				factory.destroy();
			}
			catch (RuntimeException ex) {
				logger.debug("Could not close the Redis rate limit store's connection factory", ex);
			}
		}

	}

}
