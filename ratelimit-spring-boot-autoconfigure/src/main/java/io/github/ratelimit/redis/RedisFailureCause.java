package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Names why Redis could not be used, from the root of a failure's cause chain: clients
 * wrap the server's or the network's answer (a {@code WRONGPASS} reply, a
 * {@code PKIX path building failed} certificate error) in exceptions that say only
 * "Unable to connect", so the startup log, the failure analysis and the health details
 * all name the kind found here first, and the fix with it.
 * <p>
 * Classified by the JDK's exception types and Redis's error codes only, so it works the
 * same on Lettuce, Jedis and any other client.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisFailureCause {

	/**
	 * What went wrong, most specific first: a failure whose chain holds several (a
	 * timeout wrapping a {@code WRONGPASS} reply) is the first of these it holds.
	 */
	public enum Kind {

		/** The server refused the credentials: {@code WRONGPASS}, {@code NOAUTH}. */
		AUTHENTICATION("Redis authentication failed", true),

		/** The user may not run a command the store needs: ACL {@code NOPERM}. */
		AUTHORIZATION("Redis ACL refused a command the rate limit store needs", true),

		/** The server's TLS certificate is not trusted or does not match the host. */
		TLS_TRUST("Redis TLS certificate not trusted", true),

		/** The host name does not resolve. */
		UNKNOWN_HOST("Redis host unknown", true, true),

		/** The server is a read-only replica: the store's script writes. */
		READ_ONLY_REPLICA("Redis is a read-only replica", false),

		/** The connection or a command timed out. */
		TIMEOUT("Redis timed out", false, true),

		/** Nothing listens on the address: Redis is down or the port is wrong. */
		CONNECTION_REFUSED("Redis refused the connection", false, true),

		/** Anything else (a dropped connection, a server error). */
		OTHER("Redis failed", false);

		private final String label;

		private final boolean permanent;

		private final boolean networkLevel;

		Kind(String label, boolean permanent) {
			this(label, permanent, false);
		}

		Kind(String label, boolean permanent, boolean networkLevel) {
			this.label = label;
			this.permanent = permanent;
			this.networkLevel = networkLevel;
		}

		/**
		 * Returns what the kind is called at the start of a message.
		 * @return the label, e.g. {@code Redis authentication failed}
		 */
		public String label() {
			return this.label;
		}

		/**
		 * Whether the failure lasts until the configuration (the application's or the
		 * server's) changes: waiting for Redis will not help.
		 * @return {@code true} for authentication, authorisation, TLS trust and unknown
		 * host
		 */
		public boolean isPermanent() {
			return this.permanent;
		}

	}

	private final Kind kind;

	private final Throwable evidence;

	private RedisFailureCause(Kind kind, Throwable evidence) {
		this.kind = kind;
		this.evidence = evidence;
	}

	/**
	 * Classifies a failure by the throwables in its cause chain.
	 * @param failure the failure, as thrown or as a future completed with it
	 * @return its cause
	 */
	public static RedisFailureCause of(Throwable failure) {
		Objects.requireNonNull(failure, "'failure' must not be null");
		List<Throwable> outermostFirst = chain(failure);
		List<Throwable> deepestFirst = new ArrayList<>(outermostFirst);
		Collections.reverse(deepestFirst);
		for (Kind kind : Kind.values()) {
			// A server's reply is best told by the exception that holds it; a network
			// failure by the outermost that names it (Netty adds the address there).
			List<Throwable> chain = (kind.networkLevel) ? outermostFirst : deepestFirst;
			for (Throwable cause : chain) {
				if (kind != Kind.OTHER && is(kind, cause)) {
					return new RedisFailureCause(kind, cause);
				}
			}
		}
		return new RedisFailureCause(Kind.OTHER, deepestFirst.get(0));
	}

	/**
	 * Returns {@code failure} and its causes, outermost first, each once.
	 * @param failure the failure
	 * @return the chain
	 */
	static List<Throwable> chain(Throwable failure) {
		List<Throwable> chain = new ArrayList<>();
		Map<Throwable, Boolean> seen = new IdentityHashMap<>();
		for (Throwable cause = failure; cause != null && seen.put(cause, true) == null; cause = cause.getCause()) {
			chain.add(cause);
		}
		return chain;
	}

	private static boolean is(Kind kind, Throwable cause) {
		String message = (cause.getMessage() != null) ? cause.getMessage() : "";
		String upper = message.toUpperCase(Locale.ROOT);
		return switch (kind) {
			case AUTHENTICATION -> upper.startsWith("WRONGPASS") || upper.startsWith("NOAUTH")
					|| upper.startsWith("ERR INVALID PASSWORD") || upper.startsWith("ERR AUTH");
			case AUTHORIZATION -> upper.startsWith("NOPERM");
			case TLS_TRUST -> isA(cause, "java.security.cert.CertificateException")
					|| isA(cause, "java.security.cert.CertPathBuilderException")
					|| isA(cause, "java.security.cert.CertPathValidatorException") || message.contains("PKIX path")
					|| message.contains("unable to find valid certification path");
			case UNKNOWN_HOST -> cause instanceof java.net.UnknownHostException;
			case READ_ONLY_REPLICA -> upper.startsWith("READONLY");
			// Before CONNECTION_REFUSED: Netty's ConnectTimeoutException is a
			// ConnectException.
			case TIMEOUT -> cause instanceof java.util.concurrent.TimeoutException
					|| cause instanceof java.net.SocketTimeoutException || cause instanceof ScriptTimeoutException
					|| cause.getClass().getSimpleName().endsWith("TimeoutException");
			case CONNECTION_REFUSED -> cause instanceof java.net.ConnectException;
			case OTHER -> true;
		};
	}

	/** Whether {@code cause} is an instance of the named JDK class. */
	private static boolean isA(Throwable cause, String className) {
		for (Class<?> type = cause.getClass(); type != null; type = type.getSuperclass()) {
			if (type.getName().equals(className)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns the kind of failure.
	 * @return the kind
	 */
	public Kind kind() {
		return this.kind;
	}

	/**
	 * Whether waiting for Redis will not help (see {@link Kind#isPermanent()}).
	 * @return whether the failure is permanent
	 */
	public boolean isPermanent() {
		return this.kind.isPermanent();
	}

	/**
	 * Returns the throwable that told the kind, usually the root of the chain.
	 * @return the throwable
	 */
	public Throwable evidence() {
		return this.evidence;
	}

	/**
	 * Returns one line that starts with what went wrong, then what the client or server
	 * said, e.g. {@code Redis authentication failed (RedisCommandExecutionException:
	 * WRONGPASS invalid username-password pair or user is disabled.)}.
	 * @return the description
	 */
	public String describe() {
		String message = this.evidence.getMessage();
		String said = this.evidence.getClass().getSimpleName()
				+ ((message != null) ? ": " + message.lines().findFirst().orElse("") : "");
		return this.kind.label() + " (" + said + ")";
	}

	/**
	 * Returns how to fix the failure, naming the properties to check.
	 * @return the fix
	 */
	public String fix() {
		return switch (this.kind) {
			case AUTHENTICATION -> "Check spring.data.redis.username and spring.data.redis.password (or the "
					+ "credentials in spring.data.redis.url) against the server's requirepass or ACL user.";
			case AUTHORIZATION -> "Grant the Redis user the commands the rate limit store runs, on its keys: "
					+ "ACL SETUSER <user> +evalsha +eval +script|load +time +@read +@write ~<ratelimit.key-prefix>* "
					+ "(the script's own commands are checked too), or connect as a user that has them.";
			case TLS_TRUST -> "Trust the server's certificate: set spring.data.redis.ssl.bundle to an SSL bundle "
					+ "(spring.ssl.bundle.*) whose truststore holds the certificate authority that signed it, "
					+ "and connect with the host name the certificate names.";
			case UNKNOWN_HOST -> "Check the host in spring.data.redis.host (or spring.data.redis.url, or the "
					+ "sentinel, cluster or masterreplica nodes): the name does not resolve from this machine.";
			case READ_ONLY_REPLICA -> "Point the application at the master (a replica refuses the script's "
					+ "writes), or use Sentinel, Cluster or spring.data.redis.masterreplica.nodes on Lettuce, "
					+ "which send the script to the master.";
			case TIMEOUT -> "Check that Redis is up and reachable from this machine (firewall, security group), "
					+ "and ratelimit.redis.connect-timeout and ratelimit.redis.timeout.";
			case CONNECTION_REFUSED -> "Start Redis, or check spring.data.redis.host and spring.data.redis.port.";
			case OTHER -> "See the cause below.";
		};
	}

	@Override
	public String toString() {
		return describe();
	}

}
