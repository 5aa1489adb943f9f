package io.github.ratelimit.redis;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;

/**
 * The Redis Cluster masters that the Spring Data Redis path (Jedis) could not connect to,
 * so that calls for their slots fail at once instead of each going through the client's
 * connection attempts and retries.
 * <p>
 * A master is marked down when a call for one of its slots failed to connect (refused,
 * unreachable, or the connect timed out), not when a reply was late: a call that was sent
 * may have run. While it is down, one call for its slots every {@value #PROBE_MILLIS} ms
 * is let through as a probe; the first that succeeds marks it up again. The master of a
 * key's slot is read from Spring Data Redis's cluster topology, which follows a replica
 * promoted in the master's place; it is looked up only while some master is down.
 */
final class DownClusterMasters {

	private static final Log logger = LogFactory.getLog(DownClusterMasters.class);

	static final long PROBE_MILLIS = 250;

	private final LongSupplier nanoTime;

	/**
	 * The masters down, as {@code host:port}, with when a call for them was last let
	 * through.
	 */
	private final Map<String, Long> down = new ConcurrentHashMap<>();

	DownClusterMasters(LongSupplier nanoTime) {
		this.nanoTime = nanoTime;
	}

	/**
	 * Returns whether any master is down: only then is a key's master looked up.
	 */
	boolean any() {
		return !this.down.isEmpty();
	}

	/**
	 * Returns the master serving a key's slot, as {@code host:port}.
	 * @return the master, or {@code null} when the topology cannot be read now
	 */
	static @Nullable String masterOf(RedisClusterConnection connection, byte[] key) {
		try {
			RedisClusterNode master = connection.clusterGetNodeForKey(key);
			return master.getHost() + ":" + master.getPort();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read the Redis Cluster topology", ex);
			return null;
		}
	}

	/**
	 * Returns whether a call for this master's slots is to be sent: it is up, or it is
	 * the probe due for it.
	 */
	boolean maySend(String master) {
		Long lastSent = this.down.get(master);
		if (lastSent == null) {
			return true;
		}
		long now = this.nanoTime.getAsLong();
		return now - lastSent >= TimeUnit.MILLISECONDS.toNanos(PROBE_MILLIS)
				&& this.down.replace(master, lastSent, now);
	}

	void down(String master, Throwable cause) {
		if (this.down.put(master, this.nanoTime.getAsLong()) == null) {
			logger.warn("Rate limit store: Redis Cluster master " + master + " is down (" + cause
					+ "); the keys of its slots use the failure mode, the others stay on Redis");
		}
	}

	void up(String master) {
		if (this.down.remove(master) != null) {
			logger.info("Rate limit store: Redis Cluster master " + master + " answers again");
		}
	}

	/**
	 * Returns why a call failed to reach its server at all (so it did not run): the
	 * connection was refused or unreachable, or connecting timed out. Jedis reports a
	 * cluster call whose every attempt failed so with the last attempt's failure
	 * suppressed.
	 * @return the failure to connect, or {@code null} when the call failed otherwise
	 */
	static @Nullable Throwable connectFailure(@Nullable Throwable failure) {
		return connectFailure(failure, 0);
	}

	private static @Nullable Throwable connectFailure(@Nullable Throwable failure, int depth) {
		if (failure == null || depth > 10) {
			return null;
		}
		if (failure instanceof ConnectException || failure instanceof NoRouteToHostException) {
			return failure;
		}
		if (failure instanceof SocketTimeoutException timeout) {
			String message = (timeout.getMessage() != null) ? timeout.getMessage().toLowerCase(Locale.ROOT) : "";
			return message.contains("connect") ? failure : null;
		}
		for (Throwable suppressed : failure.getSuppressed()) {
			Throwable found = connectFailure(suppressed, depth + 1);
			if (found != null) {
				return found;
			}
		}
		return (failure.getCause() != failure) ? connectFailure(failure.getCause(), depth + 1) : null;
	}

}
