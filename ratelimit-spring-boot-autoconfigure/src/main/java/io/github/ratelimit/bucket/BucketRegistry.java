package io.github.ratelimit.bucket;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.bucket.LimitSettings.InvalidLimitException;

/**
 * Resolves every bucket's limits with one precedence rule: configuration
 * ({@code ratelimit.buckets.<name>}) over the code's own settings (annotation or filter
 * rule) over {@code ratelimit.defaults}, field by field. Keeps what it resolved, so the
 * actuator endpoint can list every bucket.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class BucketRegistry {

	private final LimitSettings defaults;

	private final Map<String, BucketSettings> configured;

	private final Map<String, Registration> buckets = new LinkedHashMap<>();

	private final Map<String, String> perCallLimits = new LinkedHashMap<>();

	/**
	 * Creates a registry.
	 * @param defaults {@code ratelimit.defaults}
	 * @param configured {@code ratelimit.buckets}, by bucket name
	 */
	public BucketRegistry(LimitSettings defaults, Map<String, BucketSettings> configured) {
		this.defaults = Objects.requireNonNull(defaults, "'defaults' must not be null");
		this.configured = Map.copyOf(configured);
	}

	/**
	 * Resolves every configured bucket, so that configuration errors surface at startup.
	 * @throws InvalidBucketException naming the property at fault
	 */
	public void validateConfiguration() {
		for (String name : this.configured.keySet()) {
			resolve(name, LimitSettings.NONE, BucketSource.CONFIGURATION, "ratelimit.buckets." + name);
		}
	}

	/**
	 * Resolves and registers a bucket used by code.
	 * @param name the bucket name
	 * @param code what the code says (annotation attributes, filter rule), lowest
	 * precedence but the defaults
	 * @param source where the code is (annotation or filter)
	 * @param origin a description of the code for messages, e.g. the annotated method
	 * @return the definition
	 * @throws InvalidBucketException naming the property or attribute at fault, or when
	 * two places define the same bucket differently
	 */
	public synchronized BucketDefinition register(String name, LimitSettings code, BucketSource source, String origin) {
		BucketDefinition definition = resolve(name, code, source, origin);
		Registration existing = this.buckets.get(name);
		if (existing != null) {
			if (!existing.definition.limits().equals(definition.limits())) {
				String hint = (existing.definition.source() == BucketSource.PROGRAMMATIC)
						? " " + existing.origin + " ran before the bucket's own definition was read: call it once the"
								+ " application has started (not from a constructor), or"
						: " Give one of them another bucket name, or";
				String action = (existing.definition.source() == BucketSource.PROGRAMMATIC)
						? "Call " + existing.origin + " once the application has started (not from a constructor),"
								+ " or set the limits in ratelimit.buckets." + name + "."
						: "Give " + existing.origin + " or " + origin + " another bucket name, or set the limits in"
								+ " ratelimit.buckets." + name + " (configuration wins over both).";
				throw new InvalidBucketException(name,
						"Bucket '" + name + "' is defined twice with different limits: " + existing.definition.limits()
								+ " by " + existing.origin + " and " + definition.limits() + " by " + origin + "."
								+ hint + " set the limits in ratelimit.buckets." + name,
						action);
			}
			return existing.definition;
		}
		this.buckets.put(name, new Registration(definition, origin));
		return definition;
	}

	/**
	 * Returns a bucket for code that names it without defining it (the direct API): the
	 * bucket as the annotation, filter rule or code that registered it defined it, or
	 * else registered now from configuration and the defaults.
	 * @param name the bucket name
	 * @param origin a description of the caller for messages
	 * @return the definition
	 * @throws InvalidBucketException when configuration and defaults give no valid limit
	 */
	public synchronized BucketDefinition use(String name, String origin) {
		Registration existing = this.buckets.get(name);
		return (existing != null) ? existing.definition
				: register(name, LimitSettings.NONE, BucketSource.PROGRAMMATIC, origin);
	}

	/**
	 * Records that code sets the first limit's permits of a bucket per call (a
	 * {@code limitExpression}), so that the endpoint does not show the bucket's own limit
	 * as if it applied. Ignored when configuration sets the limit, which then wins.
	 * @param name the bucket name, registered
	 * @param expression the expression, for the endpoint
	 */
	public synchronized void limitPerCall(String name, String expression) {
		Registration registration = this.buckets.get(name);
		if (registration != null && !registration.definition.limitConfigured()) {
			this.perCallLimits.putIfAbsent(name, expression);
		}
	}

	/**
	 * Returns what registered a bucket, for the startup summary and messages.
	 * @param name the bucket name
	 * @return e.g. {@code @RateLimited on LoginService.login(String, String)},
	 * {@code ratelimit.filter.rules[0]} or {@code RateLimiters.get("partner")}, or
	 * {@code null} for a bucket no code has used (yet)
	 */
	public synchronized @Nullable String origin(String name) {
		Registration registration = this.buckets.get(name);
		return (registration != null) ? registration.origin : null;
	}

	/**
	 * Returns the expression that sets a bucket's first limit per call.
	 * @param name the bucket name
	 * @return the {@code limitExpression}, or {@code null} when the bucket's limits apply
	 * as they are
	 */
	public synchronized @Nullable String perCallLimit(String name) {
		return this.perCallLimits.get(name);
	}

	/**
	 * Returns every registered bucket, and every configured one, in registration order.
	 * @return the buckets
	 */
	public synchronized Collection<BucketDefinition> buckets() {
		Map<String, BucketDefinition> all = new LinkedHashMap<>();
		this.buckets.forEach((name, registration) -> all.put(name, registration.definition));
		for (String name : this.configured.keySet()) {
			all.computeIfAbsent(name,
					(n) -> resolve(n, LimitSettings.NONE, BucketSource.CONFIGURATION, "ratelimit.buckets." + n));
		}
		return Collections.unmodifiableCollection(all.values());
	}

	/**
	 * Returns a bucket by name: registered, or else resolved from configuration.
	 * @param name the bucket name
	 * @return the definition, or {@code null} when neither code nor configuration knows
	 * it
	 */
	public synchronized @Nullable BucketDefinition find(String name) {
		Registration registration = this.buckets.get(name);
		if (registration != null) {
			return registration.definition;
		}
		return this.configured.containsKey(name)
				? resolve(name, LimitSettings.NONE, BucketSource.CONFIGURATION, "ratelimit.buckets." + name) : null;
	}

	private BucketDefinition resolve(String name, LimitSettings code, BucketSource source, String origin) {
		BucketSettings config = this.configured.getOrDefault(name, BucketSettings.NONE);
		boolean inConfiguration = this.configured.containsKey(name);
		List<LimitSpec> limits = new ArrayList<>();
		if (!config.limits().isEmpty()) {
			for (int i = 0; i < config.limits().size(); i++) {
				LimitSettings settings = config.limits()
					.get(i)
					.orElse(config.limit())
					.orElse(code)
					.orElse(this.defaults);
				limits.add(build(name, settings, "ratelimit.buckets." + name + ".limits[" + i + "].", origin, source));
			}
		}
		else {
			LimitSettings settings = config.limit().orElse(code).orElse(this.defaults);
			String property = inConfiguration ? "ratelimit.buckets." + name + "." : null;
			limits.add(build(name, settings, property, origin, source));
		}
		LimitMode mode = (config.mode() != null) ? config.mode() : LimitMode.ENFORCE;
		boolean limitConfigured = !config.limits().isEmpty() || config.limit().limit() != null;
		return new BucketDefinition(new Bucket(name, limits, mode),
				inConfiguration ? BucketSource.CONFIGURATION : source, limitConfigured);
	}

	private LimitSpec build(String name, LimitSettings settings, @Nullable String propertyPrefix, String origin,
			BucketSource source) {
		try {
			return settings.toSpec();
		}
		catch (InvalidLimitException ex) {
			String field = ex.getField();
			String where;
			String action;
			String example = example(field);
			if (propertyPrefix != null) {
				where = propertyPrefix + field;
				action = "Set " + where + requirement(ex.getReason()) + ", e.g. " + where + "=" + example
						+ ", or remove it to use ratelimit.defaults." + field + ".";
			}
			else if (source == BucketSource.FILTER) {
				where = origin + "." + field;
				action = "Set " + where + " (or ratelimit.buckets." + name + "." + field + ", or ratelimit.defaults."
						+ field + ")" + requirement(ex.getReason()) + ", e.g. " + example + ".";
			}
			else {
				where = origin + " (attribute '" + field + "', or ratelimit.buckets." + name + "." + field
						+ " / ratelimit.defaults." + field + ")";
				action = "Set the attribute '" + field + "' of " + origin + ", or ratelimit.buckets." + name + "."
						+ field + ", or ratelimit.defaults." + field + requirement(ex.getReason()) + ", e.g. " + example
						+ ".";
			}
			throw new InvalidBucketException(name,
					where + ": " + ex.getReason() + ((ex.getValue() != null) ? " but was " + ex.getValue() : ""),
					action);
		}
	}

	private static String example(String field) {
		return "window".equals(field) ? "1m" : "10";
	}

	private static String requirement(String reason) {
		if (reason.equals("must be set")) {
			return "";
		}
		return reason.startsWith("must be ") ? " to a value that is " + reason.substring("must be ".length())
				: " so that it fits (" + reason + ")";
	}

	private record Registration(BucketDefinition definition, String origin) {
	}

	/**
	 * A bucket whose limits are invalid or ambiguous; the message names the property or
	 * annotation at fault.
	 */
	public static final class InvalidBucketException extends IllegalStateException {

		private static final long serialVersionUID = 1L;

		private final String bucket;

		private final String action;

		InvalidBucketException(String bucket, String message, String action) {
			super(message);
			this.bucket = bucket;
			this.action = action;
		}

		/**
		 * Returns what to change to fix it, naming the property or the annotation.
		 * @return the action
		 */
		public String getAction() {
			return this.action;
		}

		/**
		 * Returns the bucket at fault.
		 * @return the bucket name
		 */
		public String getBucket() {
			return this.bucket;
		}

	}

}
