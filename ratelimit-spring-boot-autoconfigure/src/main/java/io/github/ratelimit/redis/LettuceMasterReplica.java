package io.github.ratelimit.redis;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisURI;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ReflectionUtils;

/**
 * Reads the static master/replica nodes of a {@link LettuceConnectionFactory}
 * ({@code spring.data.redis.masterreplica.nodes}, or a factory made with a
 * {@link RedisStaticMasterReplicaConfiguration}), and makes the {@link RedisURI}s the
 * store connects to them with, set as Spring Data Redis sets its own: credentials,
 * database, SSL, client name and command timeout. The factory's client then has no
 * default URI of its own, so the store cannot connect to it as to a standalone server.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class LettuceMasterReplica {

	/**
	 * The factory's configuration: Spring Data Redis has no getter for a static
	 * master/replica one ({@code getStandaloneConfiguration()} then answers its
	 * {@code localhost:6379} default), so it is read from its field.
	 */
	private static final @Nullable Field CONFIGURATION = configurationField();

	private LettuceMasterReplica() {
	}

	private static @Nullable Field configurationField() {
		Field field = ReflectionUtils.findField(LettuceConnectionFactory.class, "configuration");
		if (field != null) {
			ReflectionUtils.makeAccessible(field);
		}
		return field;
	}

	/**
	 * Returns the factory's static master/replica configuration.
	 * @param factory the connection factory
	 * @return its configuration, or {@code null} when the factory is configured for
	 * another deployment (standalone, Sentinel, Cluster)
	 */
	public static @Nullable RedisStaticMasterReplicaConfiguration configurationOf(LettuceConnectionFactory factory) {
		if (CONFIGURATION == null) {
			return null;
		}
		Object configuration = ReflectionUtils.getField(CONFIGURATION, factory);
		return (configuration instanceof RedisStaticMasterReplicaConfiguration masterReplica) ? masterReplica : null;
	}

	/**
	 * Returns the nodes as {@code host:port}, in the configured order.
	 * @param configuration the configuration
	 * @return the nodes
	 */
	public static List<String> nodes(RedisStaticMasterReplicaConfiguration configuration) {
		List<String> nodes = new ArrayList<>();
		for (RedisStandaloneConfiguration node : configuration.getNodes()) {
			nodes.add(node.getHostName() + ":" + node.getPort());
		}
		return nodes;
	}

	/**
	 * Returns a URI per node, with the factory's settings.
	 * @param factory the connection factory
	 * @param configuration its static master/replica configuration
	 * @return the URIs
	 */
	static List<RedisURI> uris(LettuceConnectionFactory factory, RedisStaticMasterReplicaConfiguration configuration) {
		LettuceClientConfiguration client = factory.getClientConfiguration();
		List<RedisURI> uris = new ArrayList<>();
		for (RedisStandaloneConfiguration node : configuration.getNodes()) {
			RedisURI.Builder uri = RedisURI.Builder.redis(node.getHostName(), node.getPort())
				.withDatabase(configuration.getDatabase())
				.withSsl(client.isUseSsl())
				.withVerifyPeer(client.getVerifyMode())
				.withStartTls(client.isStartTls())
				.withTimeout(client.getCommandTimeout());
			client.getClientName().ifPresent(uri::withClientName);
			if (client.getRedisCredentialsProviderFactory().isPresent()) {
				uri.withAuthentication(
						client.getRedisCredentialsProviderFactory().get().createCredentialsProvider(configuration));
			}
			else if (configuration.getPassword().isPresent()) {
				char[] password = configuration.getPassword().get();
				if (configuration.getUsername() != null) {
					uri.withAuthentication(configuration.getUsername(), password);
				}
				else {
					uri.withPassword(password);
				}
			}
			uris.add(uri.build());
		}
		return uris;
	}

}
