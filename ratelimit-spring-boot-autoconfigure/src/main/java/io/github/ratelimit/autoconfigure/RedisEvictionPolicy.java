package io.github.ratelimit.autoconfigure;

import java.util.Properties;
import java.util.TreeSet;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Reads Redis's {@code maxmemory-policy} ({@code CONFIG GET}) and says whether Redis may
 * evict the limit keys: an {@code allkeys-*} policy evicts any key, a {@code volatile-*}
 * one any key with a time-to-live, which every limit key has. An evicted key is a limit
 * that starts again from zero, on every instance, with nothing logged by Redis; so a
 * policy that evicts is logged at WARN. Managed services often disable {@code CONFIG}
 * (and an ACL user may lack {@code +config}): the policy is then {@code unknown}, logged
 * once at INFO. Run by the {@link RedisHeartbeat} when Redis first answers and again each
 * time it answers after failing (a reconnect, maybe to another server), off the request
 * path; the health indicator and the startup summary show the last answer.
 */
final class RedisEvictionPolicy implements EvictionPolicySource {

	private static final Log logger = LogFactory.getLog(RedisEvictionPolicy.class);

	private static final String PARAMETER = "maxmemory-policy";

	private final RedisConnectionFactory connectionFactory;

	private volatile String policy = UNKNOWN;

	/**
	 * What was last logged, so that a reconnect to the same server logs nothing again.
	 */
	private String logged = "";

	RedisEvictionPolicy(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/**
	 * Returns the policy Redis last told, {@code unknown} when it refused or did not
	 * answer yet; for a cluster whose masters differ, their policies joined by commas.
	 * @return the policy
	 */
	@Override
	public String policy() {
		return this.policy;
	}

	/**
	 * Reads the policy from Redis, and logs what it means once per new answer. Never
	 * throws: a refusal or a failure leaves the policy {@code unknown}.
	 */
	synchronized void check() {
		@Nullable String read;
		String why = "CONFIG GET " + PARAMETER + " returned nothing";
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Properties config = connection.serverCommands().getConfig(PARAMETER);
			read = (config != null) ? read(config) : null;
		}
		catch (RuntimeException ex) {
			read = null;
			Throwable cause = ex;
			while (cause.getCause() != null && cause.getCause() != cause) {
				cause = cause.getCause();
			}
			String message = String.valueOf(cause.getMessage());
			// A refusal (ACL, a renamed or disabled command) is said so; anything else
			// (a timeout) is a failure, tried again at the next reconnect.
			boolean refused = message.startsWith("NOPERM") || message.contains("unknown command")
					|| message.contains("not allowed");
			why = "CONFIG GET " + PARAMETER + (refused ? " was refused: " : " failed: ") + message;
		}
		this.policy = (read != null) ? read : UNKNOWN;
		String answer = (read != null) ? read : why;
		if (answer.equals(this.logged)) {
			return;
		}
		this.logged = answer;
		if (read == null) {
			logger.info("Could not check Redis's " + PARAMETER + " (" + why + "; managed services and ACL users "
					+ "without +config refuse it): make sure it is noeviction, or that the limit keys are on a "
					+ "server of their own that never fills up, or Redis may evict them and reset limits");
		}
		else if (EvictionPolicySource.evicts(read)) {
			logger.warn("Redis's " + PARAMETER + " is " + read + ": when Redis reaches maxmemory it evicts limit keys "
					+ "(they all have a time-to-live), and an evicted limit starts again from zero on every instance. "
					+ "Set " + PARAMETER
					+ " noeviction, or keep the limits on a Redis of their own that never fills up");
		}
		else {
			logger.debug("Redis's " + PARAMETER + " is " + read + ": limit keys are never evicted");
		}
	}

	/**
	 * The policy in a {@code CONFIG GET} answer: {@code maxmemory-policy} from one
	 * server, {@code <node>.maxmemory-policy} from each master of a cluster.
	 */
	private static @Nullable String read(Properties config) {
		TreeSet<String> policies = new TreeSet<>();
		config.forEach((name, value) -> {
			if (name.toString().endsWith(PARAMETER) && value != null && !value.toString().isEmpty()) {
				policies.add(value.toString());
			}
		});
		return policies.isEmpty() ? null : String.join(",", policies);
	}

}
