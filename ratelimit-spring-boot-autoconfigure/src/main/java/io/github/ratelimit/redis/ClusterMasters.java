package io.github.ratelimit.redis;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The Redis Cluster masters that one cluster connection of the store found down, so that
 * calls for their slots fail at once instead of each waiting the timeout.
 * <p>
 * Lettuce keeps a command for a master whose connection dropped, unsent, until it
 * reconnects, and its reconnect back-off grows to half a minute: without this, every call
 * for that master's slots would wait the full timeout (or the client's own, longer one),
 * and the master would be used again only after Lettuce's next reconnect. A master is
 * marked down when a command for one of its slots was not sent within the timeout, could
 * not be sent (a new connection that cannot reach it), or was sent on a link to it that
 * closed before the reply. While any master is down, every {@value #PROBE_MILLIS} ms the
 * topology is refreshed (so that a replica promoted in its place takes its slots) and the
 * master's port is tried; when it accepts a connection again, {@code masterBack} replaces
 * the whole cluster connection, whose node connections then connect at once (and closes
 * this).
 */
final class ClusterMasters {

	private static final Log logger = LogFactory.getLog(ClusterMasters.class);

	static final long PROBE_MILLIS = 250;

	private final RedisClusterClient client;

	private final StatefulRedisClusterConnection<String, String> connection;

	private final int probeTimeoutMillis;

	private final Executor prober;

	private final Consumer<ClusterMasters> masterBack;

	/** The masters found down, as {@code host:port}. */
	private final Set<String> down = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean probing = new AtomicBoolean();

	private volatile boolean closed;

	/**
	 * Creates the view of one connection's masters.
	 * @param client the client of the connection, whose topology is refreshed
	 * @param connection the connection
	 * @param timeoutNanos the store's command timeout, also the limit of a probe
	 * @param prober where probes run (they block for at most the timeout)
	 * @param masterBack called once a master found down accepts connections again
	 */
	ClusterMasters(RedisClusterClient client, StatefulRedisClusterConnection<String, String> connection,
			long timeoutNanos, Executor prober, Consumer<ClusterMasters> masterBack) {
		this.client = client;
		this.connection = connection;
		this.probeTimeoutMillis = (int) Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(timeoutNanos), 1000));
		this.prober = prober;
		this.masterBack = masterBack;
	}

	/**
	 * The master of {@code key}'s slot when it was found down.
	 * @param key the first key of a call (all its keys share one slot)
	 * @return the master as {@code host:port}, or {@code null} when it is not known down
	 */
	@Nullable String downMasterOf(String key) {
		if (this.down.isEmpty()) {
			return null;
		}
		String master = masterOf(key);
		return (master != null && this.down.contains(master)) ? master : null;
	}

	/**
	 * The masters found down.
	 * @return their addresses, {@code host:port}
	 */
	Set<String> down() {
		return Set.copyOf(this.down);
	}

	/**
	 * Marks the master of {@code key}'s slot down: a command for it was not sent within
	 * the timeout, could not be sent (no connection to it could be made), or was sent on
	 * a connection to it that then closed. Starts probing it, and refreshing the topology
	 * so that a replica promoted in its place is found.
	 * @param key the first key of the call
	 * @return the master as {@code host:port}, or {@code null} when the slot has no known
	 * master
	 */
	@Nullable String markDown(String key) {
		String master = masterOf(key);
		if (master != null && !this.closed && this.down.add(master)) {
			logger.warn("Rate limit store: Redis Cluster master " + master
					+ " is down; calls for its slots use the failure mode until it or a replica in its place answers");
			scheduleProbe();
		}
		return master;
	}

	/**
	 * Returns whether this connection's link to the master of {@code key}'s slot is known
	 * closed (or could not be made): a command sent on it and not answered was lost with
	 * it. Never waits: the link exists, as the command was routed over it.
	 * @param key the first key of the call
	 * @return {@code true} when the link is closed
	 */
	boolean linkClosed(String key) {
		RedisClusterNode node = this.connection.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
		if (node == null || node.getUri() == null) {
			return false;
		}
		try {
			CompletableFuture<StatefulRedisConnection<String, String>> link = this.connection
				.getConnectionAsync(node.getUri().getHost(), node.getUri().getPort());
			return link.isDone() && (link.isCompletedExceptionally() || !link.join().isOpen());
		}
		catch (RuntimeException ex) {
			// A node no longer in the topology: not known closed.
			return false;
		}
	}

	/** Stops probing. */
	void close() {
		this.closed = true;
	}

	private @Nullable String masterOf(String key) {
		RedisClusterNode node = this.connection.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
		if (node == null || node.getUri() == null) {
			return null;
		}
		RedisURI uri = node.getUri();
		return uri.getHost() + ":" + uri.getPort();
	}

	private void scheduleProbe() {
		if (this.probing.compareAndSet(false, true)) {
			this.connection.getResources()
				.timer()
				.newTimeout((timeout) -> this.prober.execute(this::probe), PROBE_MILLIS, TimeUnit.MILLISECONDS);
		}
	}

	private void probe() {
		this.probing.set(false);
		if (this.closed || this.down.isEmpty()) {
			return;
		}
		try {
			// A replica promoted in place of a dead master: its slots move to it.
			this.client.refreshPartitionsAsync()
				.toCompletableFuture()
				.get(this.probeTimeoutMillis, TimeUnit.MILLISECONDS);
		}
		catch (Exception ex) {
			// Refreshed from other nodes next time; the port is tried all the same.
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
		}
		Set<String> masters = this.connection.getPartitions()
			.stream()
			.filter((node) -> node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.getSlots().isEmpty())
			.map((node) -> node.getUri().getHost() + ":" + node.getUri().getPort())
			.collect(Collectors.toSet());
		boolean back = false;
		for (String master : Set.copyOf(this.down)) {
			if (!masters.contains(master)) {
				logger.info("Rate limit store: Redis Cluster master " + master + " no longer serves slots");
				this.down.remove(master);
				continue;
			}
			if (accepts(master)) {
				logger.info("Rate limit store: Redis Cluster master " + master + " accepts connections again");
				back = true;
			}
		}
		if (back && !this.closed) {
			// Probed again until this connection is replaced (and this closed): a
			// replacement that fails is tried again.
			this.masterBack.accept(this);
		}
		if (!this.down.isEmpty()) {
			scheduleProbe();
		}
	}

	private boolean accepts(String address) {
		int colon = address.lastIndexOf(':');
		try (Socket socket = new Socket()) {
			socket.connect(
					new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))),
					this.probeTimeoutMillis);
			return true;
		}
		catch (IOException | RuntimeException ex) {
			return false;
		}
	}

}
