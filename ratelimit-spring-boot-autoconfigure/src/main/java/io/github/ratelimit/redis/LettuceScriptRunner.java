package io.github.ratelimit.redis;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.masterreplica.MasterReplica;
import io.lettuce.core.masterreplica.StatefulRedisMasterReplicaConnection;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.store.StoreReconnectedException;

/**
 * Runs the rate limit script with {@code EVALSHA} on a connection of its own, made from
 * the application's Lettuce client (standalone, Sentinel, Cluster or static
 * master/replica, as the user configured it). After {@code NOSCRIPT} (Redis restarted,
 * {@code SCRIPT FLUSH}, failover) the script is loaded again and the call retried once.
 * <p>
 * Time limits, and who waits for what:
 * <ul>
 * <li>The connection is made on a thread of its own, never on a caller's. A call that
 * arrives while it is being made waits for it, up to the connect timeout. When an attempt
 * fails, calls fail at once until the next attempt, at most one every
 * {@value #RETRY_MILLIS} ms.</li>
 * <li>Once sent, a command must be answered within the command timeout, checked on the
 * connection's I/O thread (see {@link ScriptCommand}).</li>
 * <li>A connection that closes (Redis dropped it, {@code CLIENT KILL}, or Redis stopped
 * or restarted) is replaced by a new one as soon as Lettuce reports it, without waiting
 * for Lettuce to reconnect it (its reconnect runs on a timer, and its back-off grows to
 * half a minute) or for the next call: calls wait for the new connection as for one being
 * made, so after a dropped connection they are sent within milliseconds; when Redis is
 * gone, the new connection is refused and they fail at once, as do calls until the next
 * attempt. A call sent on a connection that then closes fails, once the connection is
 * replaced or its timeout passes, with a {@link StoreReconnectedException} whose
 * {@code mayHaveRun()} is true: the caller checks for lost data and calls again on the
 * new connection (a call Redis had run is then counted twice, never admitted twice). One
 * whose connection closes without being replaced fails as one whose outcome is unknown
 * ({@link ScriptOutcomeUnknownException}).</li>
 * <li>On a Redis Cluster the connection is not replaced when one node dies, not even the
 * node its own channel (for commands without a key) is on, which Lettuce moves to another
 * node by itself. Lettuce keeps commands for a dead master unsent until it reconnects:
 * such a command fails after the timeout, as does one sent as the master died, or at once
 * when no link to the master can be made; the master is then known down and later calls
 * for its slots fail at once (see {@link ClusterMasters}) while the others stay on Redis.
 * Once the master accepts connections again, the connection is replaced by a new one; a
 * replica promoted in its place is found by a topology refresh.</li>
 * </ul>
 */
final class LettuceScriptRunner implements ScriptRunner {

	/** How many logins {@link #start()} makes when each is cut short. */
	private static final int LOGINS = 3;

	private static final Log logger = LogFactory.getLog(LettuceScriptRunner.class);

	private static final long RETRY_MILLIS = 500;

	private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS);

	private final AtomicLong reconnects = new AtomicLong();

	private final Supplier<AbstractRedisClient> clientSupplier;

	/**
	 * The static master/replica nodes to connect to with the client, or {@code null} for
	 * the client's own server(s).
	 */
	private final @Nullable Supplier<List<RedisURI>> masterReplicaNodes;

	private final RedisRateLimitScript script;

	private final long connectTimeoutNanos;

	private final long timeoutNanos;

	private final ScheduledExecutorService connector;

	/** The client's timer, for {@link #within}; fetched once. */
	private volatile @Nullable Timer timer;

	private final Object lock = new Object();

	/** The connection in use, or being made; {@code null} before the first attempt. */
	private volatile @Nullable Attempt current;

	@Override
	public boolean isConnected() {
		Attempt attempt = this.current;
		return attempt != null && attempt.usable();
	}

	@Override
	public boolean oneNode() {
		Attempt attempt = this.current;
		Connection connection = (attempt != null) ? attempt.connectionNow() : null;
		return connection != null && connection.masters == null;
	}

	/** An attempt to replace {@link #current} after it stayed closed. */
	private @Nullable Attempt replacement;

	private long lastAttemptNanos;

	private volatile boolean closed;

	private volatile @Nullable Runnable reconnected;

	/**
	 * Creates a runner; nothing connects before {@link #start()} or the first call.
	 * @param client the application's client, asked for when connecting
	 * @param masterReplicaNodes the static master/replica nodes to connect to with
	 * {@code client} (a {@link RedisClient}), or {@code null} for its own server(s)
	 * @param script the script
	 * @param connectTimeout how long a caller waits for a connection being made
	 * @param timeout how long Redis may take to answer a command once sent
	 */
	LettuceScriptRunner(Supplier<AbstractRedisClient> client, @Nullable Supplier<List<RedisURI>> masterReplicaNodes,
			RedisRateLimitScript script, Duration connectTimeout, Duration timeout) {
		this.clientSupplier = client;
		this.masterReplicaNodes = masterReplicaNodes;
		this.script = script;
		this.connectTimeoutNanos = connectTimeout.toNanos();
		this.timeoutNanos = timeout.toNanos();
		this.connector = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "ratelimit-redis-connect");
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Runners on a connection of their own from the client of {@code connectionFactory},
	 * starting the factory if it has not been started. With static master/replica nodes
	 * the connection is a master/replica one on those nodes, which sends the script (a
	 * write, never read-only) to the master.
	 * @param connectionFactory the application's connection factory
	 * @return the runner factory
	 */
	static ScriptRunner.Factory on(LettuceConnectionFactory connectionFactory) {
		RedisStaticMasterReplicaConfiguration masterReplica = LettuceMasterReplica.configurationOf(connectionFactory);
		Supplier<List<RedisURI>> nodes = (masterReplica != null)
				? () -> LettuceMasterReplica.uris(connectionFactory, masterReplica) : null;
		Supplier<AbstractRedisClient> clients = (() -> {
			if (connectionFactory.getNativeClient() == null) {
				connectionFactory.start();
			}
			AbstractRedisClient client = connectionFactory.getNativeClient();
			if (client == null) {
				throw new IllegalStateException("The LettuceConnectionFactory has no client after it started");
			}
			return client;
		});
		return (script, connectTimeout, timeout) -> new LettuceScriptRunner(clients, nodes, script, connectTimeout,
				timeout);
	}

	/**
	 * Runners on a connection of their own from {@code client}.
	 * @param client the client, asked for when connecting
	 * @return the runner factory
	 */
	static ScriptRunner.Factory on(Supplier<AbstractRedisClient> client) {
		return (script, connectTimeout, timeout) -> new LettuceScriptRunner(client, null, script, connectTimeout,
				timeout);
	}

	/**
	 * Connects and loads the script. A login cut short is tried again, up to
	 * {@value #LOGINS} logins in all: Lettuce closes the channel of a refused login
	 * before it reports the refusal, and when the close wins the race it reports
	 * "Connection closed prematurely" instead (a wrong password then let a
	 * {@code ratelimit.store=redis} application start, in one test run of many), so a
	 * required store would start without Redis on a wrong password. Once more was not
	 * enough after a login a proxy really cut: in a full build, the second login lost the
	 * same race.
	 */
	@Override
	public CompletableFuture<Void> start() {
		return load(attempt(), LOGINS).exceptionallyCompose((ex) -> {
			Throwable cause = ScriptRunner.unwrap(ex);
			return CompletableFuture.failedFuture(
					(cause instanceof RedisCommandExecutionException) ? new ScriptRefusedException(cause) : cause);
		});
	}

	private CompletableFuture<Void> load(Attempt attempt, int logins) {
		return attempt.connection.thenCompose((c) -> c.commands.scriptLoad(this.script.source())).thenAccept((sha) -> {
		})
			.toCompletableFuture()
			.exceptionallyCompose((ex) -> (logins > 1 && handshakeCut(ScriptRunner.unwrap(ex)))
					? load(connectAgainNow(), logins - 1) : CompletableFuture.failedFuture(ex));
	}

	/** Whether a connection failed as its handshake was cut: see {@link #start()}. */
	private static boolean handshakeCut(Throwable failure) {
		return RedisFailureCause.chain(failure)
			.stream()
			.anyMatch((cause) -> cause instanceof RedisConnectionException
					&& "Connection closed prematurely".equals(cause.getMessage()));
	}

	/** A new attempt, whenever the last one was made. */
	private Attempt connectAgainNow() {
		synchronized (this.lock) {
			if (this.closed) {
				return Attempt.closed();
			}
			Attempt attempt = connect(System.nanoTime(), false);
			this.current = attempt;
			return attempt;
		}
	}

	@Override
	public CompletableFuture<List<Object>> run(String[] keys, String[] args,
			@Nullable Consumer<List<Object>> lateReply) {
		Call call = new Call(keys, args, lateReply);
		Attempt attempt = attempt();
		Connection connection = attempt.connectionNow();
		// A Cluster connection stays usable while a node's is down: Lettuce routes each
		// command, and a dead master's are failed as such (ClusterMasters).
		boolean single = connection == null || connection.masters == null;
		if (connection != null && !(attempt.replacesClosed() && single)) {
			if (single && !connection.isOpen()) {
				// Lettuce would keep the command and send it once it reconnects, before
				// it tells anyone: on a server that may have restarted empty, and before
				// the check for lost data that a reconnect calls for.
				call.completeExceptionally(
						new RedisConnectionException("The Redis connection is closed; the call was not sent"));
				return call;
			}
			call.send(connection);
			return call;
		}
		if (attempt.connection.isCompletedExceptionally()) {
			attempt.connection.whenComplete((c, ex) -> call.completeExceptionally(ScriptRunner.unwrap(ex)));
			return call;
		}
		within(attempt.connection.copy(), this.connectTimeoutNanos).whenComplete((c, ex) -> {
			if (ex == null && attempt.replacesClosed() && c.masters == null) {
				// The call's caller checked Redis for lost data before the connection
				// dropped: on the new one, which may be a restarted server, it must check
				// again first.
				call.completeExceptionally(new StoreReconnectedException(
						"The Redis connection closed and was made anew while the rate limit call waited; not sent",
						null));
			}
			else if (ex == null) {
				call.send(c);
			}
			else {
				Throwable cause = ScriptRunner.unwrap(ex);
				call.completeExceptionally((cause instanceof TimeoutException)
						? new ScriptTimeoutException(ScriptTimeoutException.Wait.CONNECTION) : cause);
			}
		});
		return call;
	}

	/**
	 * On Lettuce's timer (a hashed wheel, as for its own command timeouts): scheduling
	 * and cancelling a deadline take no lock. The JDK's timer takes its queue's lock to
	 * cancel, on the I/O thread that completes the call: with 32 requests in flight,
	 * BlockHound caught a Lettuce event loop parked there in 2 of 6 runs.
	 */
	@Override
	public <T> CompletableFuture<T> within(CompletableFuture<T> call, long nanos) {
		if (call.isDone()) {
			return call;
		}
		if (this.closed) {
			// Its client may be shut down, its timer with it: the JDK's still runs.
			return ScriptRunner.super.within(call, nanos);
		}
		Timeout deadline;
		try {
			Timer timer = this.timer;
			if (timer == null) {
				// Once: the supplier may check, or even start, the connection factory.
				timer = this.clientSupplier.get().getResources().timer();
				this.timer = timer;
			}
			deadline = timer.newTimeout(
					(timeout) -> call.completeExceptionally(
							new TimeoutException("No reply within " + TimeUnit.NANOSECONDS.toMillis(nanos) + " ms")),
					nanos, TimeUnit.NANOSECONDS);
		}
		catch (IllegalStateException | RejectedExecutionException ex) {
			// The client is shutting down and its timer stopped: the JDK's still runs,
			// and the next call asks for the client's timer again (a new client's).
			this.timer = null;
			return ScriptRunner.super.within(call, nanos);
		}
		call.whenComplete((result, ex) -> deadline.cancel());
		return call;
	}

	/**
	 * Returns the attempt calls should use, starting a new one when there is none, the
	 * last one failed, or the connection stayed closed.
	 */
	private Attempt attempt() {
		Attempt attempt = this.current;
		if (attempt != null && attempt.usable()) {
			return attempt;
		}
		synchronized (this.lock) {
			attempt = this.current;
			long now = System.nanoTime();
			if (this.closed) {
				return Attempt.closed();
			}
			if (attempt == null) {
				attempt = connect(now, false);
				this.current = attempt;
				return attempt;
			}
			if (attempt.connection.isCompletedExceptionally()) {
				if (now - this.lastAttemptNanos >= RETRY_NANOS) {
					attempt = connect(now, false);
					this.current = attempt;
				}
				return attempt;
			}
			Connection connection = attempt.connectionNow();
			if (connection != null && !connection.isOpen()) {
				// Calls wait for the new connection, as for one being made; one that
				// cannot be made (Redis is gone) fails them at once.
				Attempt replacement = replace(now);
				if (replacement != null) {
					return replacement;
				}
			}
			return attempt;
		}
	}

	/**
	 * Starts a new connection in the background at once, without waiting for Lettuce to
	 * reconnect the closed one (its reconnect runs on a timer, a hundred milliseconds or
	 * more after the connection dropped), at most one attempt every
	 * {@value #RETRY_MILLIS} ms; the closed one stays until the new one is ready. Must
	 * hold {@link #lock}.
	 * @return the attempt under way or just failed, for calls to wait for or fail with;
	 * {@code null} when the last one failed longer ago than the retry interval and no new
	 * one may start yet
	 */
	private @Nullable Attempt replace(long now) {
		Attempt replacement = this.replacement;
		if (replacement != null && (!replacement.connection.isDone() || now - this.lastAttemptNanos < RETRY_NANOS)) {
			return replacement;
		}
		if (now - this.lastAttemptNanos < RETRY_NANOS) {
			return null;
		}
		Attempt next = connect(now, true);
		this.replacement = next;
		return next;
	}

	/**
	 * Puts a connection made to replace one that closed in its place, before the calls
	 * that waited for it learn it is made (they fail, not sent: see {@link #run}); the
	 * listener of reconnects is told first, so that the next decision checks Redis for
	 * lost data.
	 */
	private void replacedWith(Connection opened) {
		reconnected();
		Attempt old;
		synchronized (this.lock) {
			old = this.current;
			this.current = new Attempt(CompletableFuture.completedFuture(opened), false);
			this.replacement = null;
		}
		logger.info("Rate limit store: replaced a Redis connection that closed");
		Connection oldConnection = (old != null) ? old.connectionNow() : null;
		if (oldConnection != null) {
			// Before it is closed: the calls sent on it then fail as sent on a connection
			// made anew.
			oldConnection.replaced = true;
			oldConnection.connection.closeAsync();
		}
	}

	/**
	 * Closes a Cluster connection replaced after a master came back once the calls sent
	 * on it have had their time: those for the healthy masters' slots are still answered
	 * on it.
	 */
	private void closeLater(Connection connection) {
		connection.client.getResources()
			.timer()
			.newTimeout((timeout) -> connection.connection.closeAsync(), 2 * this.timeoutNanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Starts a connection. One that {@code replacesClosed} tells the listener of
	 * reconnects (the failover store, which then checks Redis for lost data before the
	 * next decision) before any call can use it. Must hold {@link #lock}.
	 */
	private Attempt connect(long now, boolean replacesClosed) {
		this.lastAttemptNanos = now;
		CompletableFuture<Connection> connection = CompletableFuture.supplyAsync(() -> {
			Connection opened = openConnection();
			if (replacesClosed) {
				replacedWith(opened);
			}
			return opened;
		}, this.connector);
		connection.thenAccept((c) -> {
			if (this.closed) {
				c.connection.closeAsync();
			}
		});
		return new Attempt(connection, replacesClosed);
	}

	/**
	 * A Redis Cluster master found down accepts connections again: a new cluster
	 * connection, whose node connections connect at once, replaces the current one, whose
	 * connection to that master waits out Lettuce's reconnect back-off. The old one is
	 * closed after the timeout, when the calls sent on it have been answered.
	 */
	private void clusterMasterBack(ClusterMasters masters) {
		Attempt next;
		synchronized (this.lock) {
			Attempt attempt = this.current;
			Connection current = (attempt != null) ? attempt.connectionNow() : null;
			if (this.closed || this.replacement != null || current == null || current.masters != masters) {
				return;
			}
			next = connect(System.nanoTime(), false);
			this.replacement = next;
		}
		next.connection.whenComplete((connection, ex) -> {
			Attempt old;
			synchronized (this.lock) {
				if (this.replacement == next) {
					this.replacement = null;
				}
				if (ex != null) {
					old = null;
				}
				else {
					old = this.current;
					this.current = next;
				}
			}
			if (ex != null) {
				// The current connection's masters, still down, are probed again.
				logger.warn("Rate limit store: could not reconnect to Redis Cluster: " + ScriptRunner.unwrap(ex));
				return;
			}
			logger.info("Rate limit store: reconnected to Redis Cluster after a master came back");
			reconnected();
			Connection oldConnection = (old != null) ? old.connectionNow() : null;
			if (oldConnection != null) {
				if (oldConnection.masters != null) {
					oldConnection.masters.close();
				}
				closeLater(oldConnection);
			}
		});
	}

	/**
	 * Replaces a connection that dropped, now or, when an attempt was made less than
	 * {@value #RETRY_MILLIS} ms ago, once that interval is over. Runs on the connector.
	 */
	private void replaceDropped() {
		attempt();
		long waitNanos;
		synchronized (this.lock) {
			Attempt attempt = this.current;
			Connection connection = (attempt != null) ? attempt.connectionNow() : null;
			if (this.closed || this.replacement != null || connection == null || connection.isOpen()) {
				return;
			}
			waitNanos = Math.max(0, this.lastAttemptNanos + RETRY_NANOS - System.nanoTime());
		}
		try {
			this.connector.schedule(this::replaceDropped, Math.max(waitNanos, TimeUnit.MILLISECONDS.toNanos(1)),
					TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Closed meanwhile.
		}
	}

	@Override
	public void onReconnect(Runnable listener) {
		this.reconnected = listener;
	}

	@Override
	public long reconnects() {
		return this.reconnects.get();
	}

	private void reconnected() {
		// Counted before anyone is told or can use the connection.
		this.reconnects.incrementAndGet();
		Runnable listener = this.reconnected;
		if (listener != null && !this.closed) {
			listener.run();
		}
	}

	private Connection openConnection() {
		AbstractRedisClient client = this.clientSupplier.get();
		if (client instanceof RedisClusterClient cluster) {
			StatefulRedisClusterConnection<String, String> connection = cluster.connect(StringCodec.UTF8);
			connection.addListener(new ReconnectListener());
			ClusterMasters masters = new ClusterMasters(cluster, connection, this.timeoutNanos, this.connector,
					this::clusterMasterBack);
			return new Connection(client, connection, connection.async(), false, masters);
		}
		if (client instanceof RedisClient standalone && this.masterReplicaNodes != null) {
			StatefulRedisMasterReplicaConnection<String, String> connection = MasterReplica.connect(standalone,
					StringCodec.UTF8, this.masterReplicaNodes.get());
			connection.addListener(new ReconnectListener());
			return new Connection(client, connection, connection.async(), true, null);
		}
		if (client instanceof RedisClient standalone) {
			StatefulRedisConnection<String, String> connection = standalone.connect(StringCodec.UTF8);
			connection.addListener(new ReconnectListener());
			return new Connection(client, connection, connection.async(), false, null);
		}
		throw new IllegalStateException("Unsupported Lettuce client " + client.getClass().getName()
				+ ": expected a RedisClient or a RedisClusterClient");
	}

	@Override
	public void close() {
		Attempt attempt;
		Attempt replacement;
		synchronized (this.lock) {
			if (this.closed) {
				// Once: Lettuce warns about a connection closed twice.
				return;
			}
			this.closed = true;
			attempt = this.current;
			replacement = this.replacement;
		}
		for (Attempt open : new Attempt[] { attempt, replacement }) {
			if (open == null) {
				continue;
			}
			Connection connection = open.connectionNow();
			if (connection != null && connection.masters != null) {
				connection.masters.close();
			}
			if (connection != null) {
				// Synchronously: until the close completes the client still holds the
				// connection, and a client shut down meanwhile would close it again.
				connection.connection.close();
			}
			else {
				open.connection.thenAccept((c) -> c.connection.closeAsync());
			}
		}
		this.connector.shutdown();
	}

	/**
	 * Tells of a connection Lettuce made again after it dropped (the server may be one
	 * that restarted), and starts replacing one that dropped at once, without waiting for
	 * the next call: the calls that were sent on it then learn without waiting out their
	 * timeout that no reply will come on it (see {@link Call#failed}).
	 */
	private final class ReconnectListener implements RedisConnectionStateListener {

		@Override
		public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress socketAddress) {
			reconnected();
		}

		@Override
		public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
			if (!LettuceScriptRunner.this.closed) {
				try {
					LettuceScriptRunner.this.connector.execute(LettuceScriptRunner.this::replaceDropped);
				}
				catch (RejectedExecutionException ex) {
					// Closed meanwhile.
				}
			}
		}

	}

	/**
	 * A connection attempt, and the connection once made; {@code replacesClosed} for one
	 * made to replace a connection that closed, which calls wait for but do not use.
	 */
	private record Attempt(CompletableFuture<Connection> connection, boolean replacesClosed) {

		/** What calls get once the runner is closed. */
		static Attempt closed() {
			return new Attempt(CompletableFuture.failedFuture(new IllegalStateException("Redis store is closed")),
					false);
		}

		@Nullable Connection connectionNow() {
			return (this.connection.isDone() && !this.connection.isCompletedExceptionally()) ? this.connection.join()
					: null;
		}

		/** Whether calls can use it without a look at the others: made and open. */
		boolean usable() {
			Connection connection = connectionNow();
			return connection != null && connection.isOpen();
		}

	}

	/**
	 * An open connection of the runner.
	 */
	private static final class Connection {

		private static final long OPEN = Long.MIN_VALUE;

		final AbstractRedisClient client;

		final StatefulConnection<String, String> connection;

		final RedisClusterAsyncCommands<String, String> commands;

		/**
		 * Whether it is a static master/replica connection: it stays open while any node
		 * is connected, so a master that is down shows only as a command left unsent.
		 */
		final boolean masterReplica;

		/** The masters of a Redis Cluster connection, {@code null} on other ones. */
		final @Nullable ClusterMasters masters;

		private volatile long closedSince = OPEN;

		/** Whether a new connection replaced this one after it closed. */
		volatile boolean replaced;

		Connection(AbstractRedisClient client, StatefulConnection<String, String> connection,
				RedisClusterAsyncCommands<String, String> commands, boolean masterReplica,
				@Nullable ClusterMasters masters) {
			this.client = client;
			this.connection = connection;
			this.commands = commands;
			this.masterReplica = masterReplica;
			this.masters = masters;
		}

		/**
		 * Whether calls can be sent on it. A Redis Cluster connection always can, until
		 * the runner closes it: its own channel (for commands without a key, on one node)
		 * closing when that node dies says nothing of the other masters, and Lettuce
		 * reconnects it to another node by itself; each master's state is kept by
		 * {@link ClusterMasters}.
		 */
		boolean isOpen() {
			if (this.masters != null || this.connection.isOpen()) {
				if (this.closedSince != OPEN) {
					this.closedSince = OPEN;
				}
				return true;
			}
			if (this.closedSince == OPEN) {
				this.closedSince = System.nanoTime();
			}
			return false;
		}

		boolean closedLongerThan(long nanos, long now) {
			return !isOpen() && now - this.closedSince >= nanos;
		}

	}

	/**
	 * One script call: the first {@code EVALSHA}, and a second one after
	 * {@code NOSCRIPT}.
	 */
	private final class Call extends ScriptCommand.ScriptCall {

		private final String[] keys;

		private final String[] args;

		private final @Nullable Consumer<List<Object>> lateReply;

		private @Nullable Connection connection;

		private boolean retried;

		Call(String[] keys, String[] args, @Nullable Consumer<List<Object>> lateReply) {
			this.keys = keys;
			this.args = args;
			this.lateReply = lateReply;
		}

		void send(Connection connection) {
			if (isDone()) {
				return;
			}
			// A connection that closed just now: Lettuce keeps the command and sends it
			// once reconnected; the guard below fails it if that takes longer than the
			// timeout. One closed for longer is a Redis that is gone: fail at once.
			if (connection.closedLongerThan(LettuceScriptRunner.this.timeoutNanos, System.nanoTime())) {
				completeExceptionally(new RedisConnectionException("Redis connection is down"));
				return;
			}
			ClusterMasters masters = connection.masters;
			String downMaster = (masters != null && this.keys.length > 0) ? masters.downMasterOf(this.keys[0]) : null;
			if (downMaster != null) {
				completeExceptionally(new ClusterMasterDownException("Redis Cluster master " + downMaster
						+ " of the key's slot is down (calls for other masters' slots are sent)"));
				return;
			}
			this.connection = connection;
			ScriptCommand command = new ScriptCommand(LettuceScriptRunner.this.script.sha1(), this.keys, this.args,
					this, LettuceScriptRunner.this.timeoutNanos, connection.client.getResources());
			connection.connection.dispatch(command);
			// A connection that closes as the command is dispatched: Lettuce keeps the
			// command to send after it reconnects, and no I/O thread times it out. Fail
			// it instead, as for a connection found closed.
			// On master/replica, a command for a master that is down waits unsent on that
			// node's connection while the connection as a whole stays open: fail it too.
			// On a cluster, a command for a master that is down waits unsent on that
			// master's connection while the cluster connection stays open: fail it, and
			// fail later calls for that master's slots at once.
			command.guardUntilSent(connection.client.getResources().timer().newTimeout((timeout) -> {
				if (!isDone() && !command.sent()
						&& (connection.masterReplica || masters != null || !connection.connection.isOpen())) {
					if (masters != null && this.keys.length > 0) {
						String master = masters.markDown(this.keys[0]);
						completeExceptionally(new ClusterMasterDownException(
								"Redis Cluster master " + ((master != null) ? master + " " : "")
										+ "of the key's slot is down (no connection to it within the timeout)"));
					}
					else {
						completeExceptionally(new RedisConnectionException(
								connection.masterReplica ? "Redis master connection is down (static master/replica)"
										: "Redis connection is down"));
					}
					command.cancel();
				}
			}, LettuceScriptRunner.this.timeoutNanos, TimeUnit.NANOSECONDS));
		}

		@Override
		void reply(List<Object> reply) {
			if (!complete(reply) && this.lateReply != null) {
				this.lateReply.accept(reply);
			}
		}

		@Override
		void failed(ScriptCommand command, Throwable failure) {
			Connection connection = this.connection;
			if (ScriptRunner.unwrap(failure) instanceof RedisNoScriptException && !this.retried && connection != null
					&& !isDone()) {
				this.retried = true;
				connection.commands.scriptLoad(LettuceScriptRunner.this.script.source()).whenComplete((sha, ex) -> {
					if (ex != null) {
						completeExceptionally(ScriptRunner.unwrap(ex));
					}
					else {
						send(connection);
					}
				});
				return;
			}
			Throwable cause = ScriptRunner.unwrap(failure);
			ClusterMasters masters = (connection != null) ? connection.masters : null;
			boolean linkLost = command.sent() ? !(cause instanceof RedisCommandExecutionException)
					: cause instanceof RedisConnectionException;
			if (masters != null && linkLost && this.keys.length > 0 && !isDone()) {
				// No link to the master could be made (a connection made while it is
				// down), or the link closed after the call was sent: marked down like one
				// whose command stayed unsent, so that its slots fail at once and the
				// topology is refreshed until a replica takes them over or it is back.
				String master = masters.markDown(this.keys[0]);
				completeExceptionally(new ClusterMasterDownException(
						"Redis Cluster master " + ((master != null) ? master + " " : "") + "of the key's slot is down ("
								+ cause.getMessage()
								+ (command.sent() ? ", after the call was sent; Redis may have run it)" : ")"),
						command.sent()));
				return;
			}
			if (command.sent() && connection != null && connection.replaced
					&& !(cause instanceof RedisCommandExecutionException)) {
				completeExceptionally(sentBeforeReconnect(cause));
				return;
			}
			// Sent, then lost (the connection closed before the reply): Redis may have
			// run it. An error reply tells the script did not decide.
			completeExceptionally((command.sent() && !(cause instanceof RedisCommandExecutionException))
					? new ScriptOutcomeUnknownException(cause) : failure);
		}

		@Override
		void replyTimedOut(ScriptCommand command) {
			Connection connection = this.connection;
			ClusterMasters masters = (connection != null) ? connection.masters : null;
			if (masters != null && this.keys.length > 0 && masters.linkClosed(this.keys[0])) {
				// Written to a master as it died (before its connection was seen to
				// close): no reply will come, and Lettuce would send it again once it
				// reconnects, maybe to the master restarted. Not a slow Redis: the
				// master's outage, whose other calls then fail at once.
				String master = masters.markDown(this.keys[0]);
				completeExceptionally(new ClusterMasterDownException("Redis Cluster master "
						+ ((master != null) ? master + " " : "")
						+ "of the key's slot closed its connection after the call was sent; Redis may have run it",
						true));
				command.cancel();
				return;
			}
			if (connection != null && masters == null && !connection.connection.isOpen()) {
				// The connection dropped after the call was sent, and is being replaced
				// (see ReconnectListener): no reply will come in time on it. Left to
				// Lettuce, which may still send it again if it reconnects first: a late
				// reply then gives its permits back.
				completeExceptionally(sentBeforeReconnect(null));
				return;
			}
			super.replyTimedOut(command);
		}

		/**
		 * A call sent on a connection that then dropped: the caller checks Redis for lost
		 * data and calls again on the new connection rather than deciding without Redis;
		 * a call Redis had run is counted twice at worst, never admitted twice.
		 */
		private StoreReconnectedException sentBeforeReconnect(@Nullable Throwable cause) {
			return new StoreReconnectedException("The Redis connection closed after the rate limit call was sent, "
					+ "and is made anew; Redis may have run the call", cause, true);
		}

	}

}
