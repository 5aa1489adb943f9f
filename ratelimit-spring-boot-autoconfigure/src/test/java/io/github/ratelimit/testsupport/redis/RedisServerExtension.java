package io.github.ratelimit.testsupport.redis;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that gives each test class a real, empty Redis: a standalone server
 * or a three-master cluster. Register it on a static field:
 *
 * <pre class="code">
 * &#064;RegisterExtension
 * static final RedisServerExtension redis = RedisServerExtension.standalone();
 * // or RedisServerExtension.cluster() for three masters
 * </pre>
 *
 * A standalone server is a Testcontainers {@code redis:7} container when a Docker engine
 * answers, otherwise a {@code redis-server} process from the {@code PATH} on a free port.
 * The system property {@code ratelimit-test.redis} ({@code binary}, {@code docker} or
 * {@code auto}) forces the choice. A cluster always runs {@code redis-server} and
 * {@code redis-cli} from the {@code PATH}. When nothing can provide Redis, the test class
 * fails (it is never skipped) with a message that says what to install. Port 6379 is
 * never used.
 * <p>
 * The server starts before the first test of the class and ends after the last one,
 * whatever state a test left it in (stopped, paused); a JVM shutdown hook ends it if the
 * run is cut short. Data is not flushed between test methods. When the field is in a base
 * class, each concrete test class gets its own server; {@code @Nested} classes share the
 * server of their enclosing class. Test classes sharing one extension instance must not
 * run concurrently.
 *
 * @author ratelimit-spring-boot-starter authors
 * @see RedisServer
 * @see RedisCluster
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback {

	private final boolean clusterMode;

	private final int replicas;

	private final Object lock = new Object();

	private volatile @Nullable RedisServer server;

	private volatile @Nullable RedisCluster cluster;

	private volatile @Nullable String ownerId;

	private RedisServerExtension(boolean clusterMode) {
		this(clusterMode, 0);
	}

	private RedisServerExtension(boolean clusterMode, int replicas) {
		this.clusterMode = clusterMode;
		this.replicas = replicas;
	}

	/**
	 * An extension that starts one standalone server per test class.
	 * @return the extension
	 */
	public static RedisServerExtension standalone() {
		return new RedisServerExtension(false);
	}

	/**
	 * An extension that starts a cluster of {@value RedisCluster#MASTERS} masters per
	 * test class. Its cluster is {@link #redisCluster()}.
	 * @return the extension
	 */
	public static RedisServerExtension cluster() {
		return new RedisServerExtension(true);
	}

	/**
	 * An extension that starts a cluster of {@value RedisCluster#MASTERS} masters with
	 * one replica each per test class, nodes with {@code --cluster-node-timeout 1000}.
	 * @return the extension
	 */
	public static RedisServerExtension clusterWithReplicas() {
		return new RedisServerExtension(true, 1);
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		synchronized (this.lock) {
			String owner = this.ownerId;
			if (owner != null) {
				if (context.getUniqueId().startsWith(owner + "/")) {
					// a @Nested class shares the server of its enclosing class
					return;
				}
				throw new ExtensionConfigurationException("This RedisServerExtension already serves " + owner
						+ " and cannot serve " + context.getUniqueId()
						+ " at the same time: test classes sharing it must not run concurrently");
			}
			if (this.clusterMode) {
				this.cluster = RedisCluster.start(RedisEnvironment.clusterBinaries(), this.replicas);
			}
			else {
				this.server = (RedisEnvironment.standaloneBackend() == RedisEnvironment.Backend.DOCKER)
						? ContainerRedisServer.startNew()
						: BinaryRedisServer.startNew(RedisEnvironment.standaloneBinaries(), false);
			}
			this.ownerId = context.getUniqueId();
		}
	}

	@Override
	public void afterAll(ExtensionContext context) {
		synchronized (this.lock) {
			if (!context.getUniqueId().equals(this.ownerId)) {
				return;
			}
			RedisServer standaloneServer = this.server;
			RedisCluster redisCluster = this.cluster;
			this.server = null;
			this.cluster = null;
			this.ownerId = null;
			if (standaloneServer instanceof BinaryRedisServer binary) {
				binary.close();
			}
			else if (standaloneServer instanceof ContainerRedisServer container) {
				container.close();
			}
			if (redisCluster != null) {
				redisCluster.close();
			}
		}
	}

	/**
	 * The host of the standalone server.
	 * @return the host
	 * @throws IllegalStateException in cluster mode or outside a test class
	 */
	public String host() {
		return server().host();
	}

	/**
	 * The port of the standalone server; it stays the same across stop and start.
	 * @return the port
	 * @throws IllegalStateException in cluster mode or outside a test class
	 */
	public int port() {
		return server().port();
	}

	/**
	 * The standalone server of the current test class.
	 * @return the running server
	 * @throws IllegalStateException in cluster mode or outside a test class
	 */
	public RedisServer server() {
		if (this.clusterMode) {
			throw new IllegalStateException(
					"This RedisServerExtension runs a cluster: use redisCluster() or nodes(), not server(), host() or port()");
		}
		RedisServer current = this.server;
		if (current == null) {
			throw notStarted();
		}
		return current;
	}

	/**
	 * The cluster of the current test class. (Not named {@code cluster()}: that is the
	 * static factory, and Java does not allow an instance method with the same
	 * signature.)
	 * @return the running cluster
	 * @throws IllegalStateException in standalone mode or outside a test class
	 */
	public RedisCluster redisCluster() {
		if (!this.clusterMode) {
			throw new IllegalStateException(
					"This RedisServerExtension runs a standalone server: use server(), host() or port(), not redisCluster()");
		}
		RedisCluster current = this.cluster;
		if (current == null) {
			throw notStarted();
		}
		return current;
	}

	/**
	 * The address of every node as {@code host:port}: the standalone server alone, or
	 * every node of the cluster.
	 * @return the addresses
	 */
	public List<String> nodes() {
		return this.clusterMode ? redisCluster().addresses() : List.of(server().address());
	}

	/**
	 * Whether this extension runs a cluster.
	 * @return {@code true} for {@link #cluster()}, {@code false} for
	 * {@link #standalone()}
	 */
	public boolean isCluster() {
		return this.clusterMode;
	}

	private IllegalStateException notStarted() {
		return new IllegalStateException("Redis is not running: register the RedisServerExtension with "
				+ "@RegisterExtension on a static field and use it from a test (it starts before the first test "
				+ "of the class and ends after the last one)");
	}

}
