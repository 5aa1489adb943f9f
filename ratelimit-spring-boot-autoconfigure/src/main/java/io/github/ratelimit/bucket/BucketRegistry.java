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
				throw new InvalidBucketException(name,
						"Bucket '" + name + "' is defined twice with different limits: " + existing.definition.limits()
								+ " by " + existing.origin + " and " + definition.limits() + " by " + origin + "."
								+ hint + " set the limits in ratelimit.buckets." + name);
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
			if (propertyPrefix != null) {
				where = propertyPrefix + field;
			}
			else if (source == BucketSource.FILTER) {
				where = origin + "." + field;
			}
			else {
				where = origin + " (attribute '" + field + "', or ratelimit.buckets." + name + "." + field
						+ " / ratelimit.defaults." + field + ")";
			}
			throw new InvalidBucketException(name,
					where + ": " + ex.getReason() + ((ex.getValue() != null) ? " but was " + ex.getValue() : ""));
		}
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

		InvalidBucketException(String bucket, String message) {
			super(message);
			this.bucket = bucket;
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
