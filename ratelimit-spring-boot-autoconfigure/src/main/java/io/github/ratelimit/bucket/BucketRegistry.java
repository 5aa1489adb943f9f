package io.github.ratelimit.bucket;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.InvalidRateLimitConfigurationException;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.bucket.LimitSettings.InvalidLimitException;

/**
 * Resolves every bucket's limits with one precedence rule: configuration
 * ({@code ratelimit.buckets.<name>}) over the code's own settings (annotation or filter
 * rule) over {@code ratelimit.defaults}, field by field, with a live override
 * ({@link LiveLimits}) above them all. Keeps what it resolved, so the actuator endpoint
 * can list every bucket, and a live change can update each bucket in place.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class BucketRegistry {

	private final LimitSettings defaults;

	private final Map<String, BucketSettings> configured;

	private final Map<String, Registration> buckets = new LinkedHashMap<>();

	private final Map<String, String> perCallLimits = new LinkedHashMap<>();

	private final Map<String, LimitOverride> overrides = new HashMap<>();

	/** What each user of a bucket needs of its limits, by bucket name, then by user. */
	private final Map<String, Map<String, BucketConstraint>> constraints = new HashMap<>();

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
			resolveConfigured(name, null);
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
		BucketDefinition definition = resolve(name, code, source, origin, this.overrides.get(name));
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
		this.buckets.put(name, new Registration(definition, code, source, origin));
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
	 * Records what one user of a bucket needs of its limits, and checks the bucket's
	 * limits against it now: the same check runs for every live change of the bucket
	 * ({@link #preview}, {@link #override}), so a change is refused with the message
	 * startup gives for the configuration it would make.
	 * @param name the bucket name, registered
	 * @param user who needs it, e.g. {@code @RateLimited(refundWhen) on
	 * LoginService.login(String, String)}; a user registered again replaces its
	 * constraint
	 * @param constraint the check
	 * @throws IllegalStateException what {@code constraint} throws for the bucket's
	 * limits as they are
	 */
	public synchronized void constrain(String name, String user, BucketConstraint constraint) {
		Registration registration = this.buckets.get(name);
		if (registration == null) {
			throw new IllegalStateException(
					"Bucket '" + name + "' is not registered; register it before " + user + " constrains it");
		}
		constraint.check(registration.definition.limits());
		this.constraints.computeIfAbsent(name, (bucket) -> new LinkedHashMap<>()).put(user, constraint);
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
			all.computeIfAbsent(name, this::resolveConfigured);
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
		return this.configured.containsKey(name) ? resolveConfigured(name) : null;
	}

	/**
	 * Returns a bucket as it would be with a live override, without applying it: the
	 * override is checked exactly as configuration is, and an error names the
	 * {@code ratelimit.buckets.<name>} property that would be at fault; the result is
	 * checked against what each user of the bucket needs of its limits
	 * ({@link #constrain}), with the message startup gives.
	 * @param name the bucket name
	 * @param override the override
	 * @return the bucket with the override, or {@code null} when neither code nor
	 * configuration knows the bucket
	 * @throws InvalidBucketException when the override gives an invalid limit, or limits
	 * that a user of the bucket cannot work with
	 */
	public synchronized @Nullable BucketDefinition preview(String name, LimitOverride override) {
		Registration registration = this.buckets.get(name);
		if (registration == null && !this.configured.containsKey(name)) {
			return null;
		}
		BucketSettings config = this.configured.getOrDefault(name, BucketSettings.NONE);
		int entries = override.settings().limits().size();
		if (!config.limits().isEmpty() && override.settings().limit().isSet()) {
			throw new InvalidBucketException(name,
					"ratelimit.buckets." + name + ".limits: the bucket has " + config.limits().size()
							+ " limits (ratelimit.buckets." + name + ".limits); say which one to change with 'index'",
					"Send 'index' with the position of the limit to change (0 to " + (config.limits().size() - 1)
							+ ").");
		}
		if (entries > config.limits().size()) {
			throw new InvalidBucketException(name,
					"ratelimit.buckets." + name + ".limits[" + (entries - 1) + "]: "
							+ (config.limits().isEmpty() ? "the bucket has one limit; leave 'index' out"
									: "the bucket has " + config.limits().size() + " limits, 'index' 0 to "
											+ (config.limits().size() - 1)),
					config.limits().isEmpty() ? "Leave 'index' out." : "Send an 'index' of an existing limit.");
		}
		BucketDefinition previewed = (registration != null)
				? resolve(name, registration.code, registration.source, registration.origin, override)
				: resolveConfigured(name, override);
		checkConstraints(name, previewed.limits());
		return previewed;
	}

	/**
	 * Makes {@code overrides} the live overrides, replacing the previous ones: each
	 * bucket whose override was set, changed or cleared is resolved again and updated in
	 * place. An override this application cannot apply (an invalid limit for this version
	 * of the bucket, or limits one of its users cannot work with) leaves the bucket as it
	 * was and is reported in its change. An override of a bucket not registered yet
	 * applies when it is.
	 * @param overrides every live override, by bucket name
	 * @return what changed, one entry per bucket updated or left as it was
	 */
	public synchronized List<LimitChange> override(Map<String, LimitOverride> overrides) {
		Map<String, LimitOverride> previous = new HashMap<>(this.overrides);
		this.overrides.clear();
		this.overrides.putAll(overrides);
		List<LimitChange> changes = new ArrayList<>();
		for (Registration registration : this.buckets.values()) {
			String name = registration.definition.name();
			LimitOverride before = previous.get(name);
			LimitOverride after = overrides.get(name);
			if (Objects.equals(before, after)) {
				continue;
			}
			List<LimitSpec> old = registration.definition.limits();
			try {
				BucketDefinition resolved = resolve(name, registration.code, registration.source, registration.origin,
						after);
				checkConstraints(name, resolved.limits());
				registration.definition.update(resolved);
				changes.add(new LimitChange(name, old, resolved.limits(), before, after, null));
			}
			catch (InvalidBucketException ex) {
				restore(name, before);
				changes.add(new LimitChange(name, old, old, before, after, ex.getMessage()));
			}
		}
		for (String name : this.configured.keySet()) {
			LimitOverride before = previous.get(name);
			LimitOverride after = overrides.get(name);
			if (!this.buckets.containsKey(name) && !Objects.equals(before, after)) {
				// Nothing holds the bucket yet: only say what it is now.
				List<LimitSpec> old = resolveConfigured(name, before).limits();
				try {
					changes
						.add(new LimitChange(name, old, resolveConfigured(name, after).limits(), before, after, null));
				}
				catch (InvalidBucketException ex) {
					restore(name, before);
					changes.add(new LimitChange(name, old, old, before, after, ex.getMessage()));
				}
			}
		}
		return changes;
	}

	/**
	 * Runs the checks of every user of the bucket; a failure keeps its message, which is
	 * the one startup gives for these limits.
	 */
	private void checkConstraints(String name, List<LimitSpec> limits) {
		Map<String, BucketConstraint> users = this.constraints.getOrDefault(name, Map.of());
		for (Map.Entry<String, BucketConstraint> user : users.entrySet()) {
			try {
				user.getValue().check(limits);
			}
			catch (IllegalStateException ex) {
				if (ex instanceof InvalidBucketException invalid) {
					throw invalid;
				}
				throw new InvalidBucketException(name, String.valueOf(ex.getMessage()),
						"Keep limits that " + user.getKey() + " can work with, or change it first.", ex);
			}
		}
	}

	private void restore(String name, @Nullable LimitOverride override) {
		if (override != null) {
			this.overrides.put(name, override);
		}
		else {
			this.overrides.remove(name);
		}
	}

	private BucketDefinition resolveConfigured(String name) {
		return resolveConfigured(name, this.overrides.get(name));
	}

	private BucketDefinition resolveConfigured(String name, @Nullable LimitOverride override) {
		return resolve(name, LimitSettings.NONE, BucketSource.CONFIGURATION, "ratelimit.buckets." + name, override);
	}

	private BucketDefinition resolve(String name, LimitSettings code, BucketSource source, String origin,
			@Nullable LimitOverride override) {
		BucketSettings config = overlay(this.configured.getOrDefault(name, BucketSettings.NONE), override);
		// An override is written like configuration, and its errors are named so.
		boolean inConfiguration = this.configured.containsKey(name) || override != null;
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
		BucketSource resolvedSource = (override != null) ? BucketSource.OVERRIDE
				: inConfiguration ? BucketSource.CONFIGURATION : source;
		return new BucketDefinition(new Bucket(name, limits, mode), resolvedSource, limitConfigured, override);
	}

	/**
	 * Lays a live override over the configured settings, field by field, each entry of
	 * its {@code limits} over the configured entry at the same index.
	 */
	private static BucketSettings overlay(BucketSettings config, @Nullable LimitOverride override) {
		if (override == null) {
			return config;
		}
		BucketSettings settings = override.settings();
		List<LimitSettings> limits = new ArrayList<>(config.limits());
		for (int i = 0; i < settings.limits().size() && i < limits.size(); i++) {
			limits.set(i, settings.limits().get(i).orElse(limits.get(i)));
		}
		return new BucketSettings(settings.limit().orElse(config.limit()), limits, config.mode());
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
			// The exception's hint says how to fix it; otherwise the reason and an
			// example.
			String hint = ex.getHint();
			String example = example(field);
			if (propertyPrefix != null) {
				where = propertyPrefix + field;
				action = ((hint != null) ? "Fix " + where + ": " + hint
						: "Set " + where + requirement(ex.getReason()) + ", e.g. " + where + "=" + example)
						+ ", or remove it to use ratelimit.defaults." + field + ".";
			}
			else if (source == BucketSource.FILTER) {
				where = origin + "." + field;
				action = "Set " + where + " (or ratelimit.buckets." + name + "." + field + ", or ratelimit.defaults."
						+ field + ")"
						+ ((hint != null) ? ": " + hint : requirement(ex.getReason()) + ", e.g. " + example) + ".";
			}
			else {
				where = origin + " (attribute '" + field + "', or ratelimit.buckets." + name + "." + field
						+ " / ratelimit.defaults." + field + ")";
				action = "Set the attribute '" + field + "' of " + origin + ", or ratelimit.buckets." + name + "."
						+ field + ", or ratelimit.defaults." + field
						+ ((hint != null) ? ": " + hint : requirement(ex.getReason()) + ", e.g. " + example) + ".";
			}
			throw new InvalidBucketException(name, where + ": " + ex.getProblem(), action);
		}
	}

	private static String example(String field) {
		return switch (field) {
			case "window" -> "1m";
			case "penalty" -> "15m";
			case "calendar" -> "month";
			case "zone" -> "Europe/Berlin";
			case "algorithm" -> "token-bucket";
			default -> "10";
		};
	}

	private static String requirement(String reason) {
		if (reason.equals("must be set")) {
			return "";
		}
		if (reason.startsWith("must be ")) {
			return " to a value that is " + reason.substring("must be ".length());
		}
		return reason.startsWith("must not be ")
				? " to a value that is not " + reason.substring("must not be ".length())
				: " so that it fits (" + reason + ")";
	}

	private record Registration(BucketDefinition definition, LimitSettings code, BucketSource source, String origin) {
	}

	/**
	 * What a change of the live overrides did to one bucket.
	 *
	 * @param bucket the bucket name
	 * @param before the limits before
	 * @param after the limits now (the same as before when the change was refused)
	 * @param previous the override before, or {@code null}
	 * @param override the override asked for, or {@code null} when it was cleared
	 * @param error why this application could not apply the override, or {@code null}
	 */
	public record LimitChange(String bucket, List<LimitSpec> before, List<LimitSpec> after,
			@Nullable LimitOverride previous, @Nullable LimitOverride override, @Nullable String error) {
	}

	/**
	 * A bucket whose limits are invalid or ambiguous; the message names the property or
	 * annotation at fault.
	 */
	public static final class InvalidBucketException extends InvalidRateLimitConfigurationException {

		private static final long serialVersionUID = 1L;

		private final String bucket;

		private final String action;

		InvalidBucketException(String bucket, String message, String action) {
			super(message);
			this.bucket = bucket;
			this.action = action;
		}

		InvalidBucketException(String bucket, String message, String action, Throwable cause) {
			super(message, cause);
			this.bucket = bucket;
			this.action = action;
		}

		/**
		 * Returns the bucket at fault.
		 * @return {@code ratelimit.buckets.<name>}
		 */
		@Override
		public String getWhere() {
			return "ratelimit.buckets." + this.bucket;
		}

		/**
		 * Returns what to change to fix it, naming the property or the annotation.
		 * @return the action
		 */
		@Override
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
