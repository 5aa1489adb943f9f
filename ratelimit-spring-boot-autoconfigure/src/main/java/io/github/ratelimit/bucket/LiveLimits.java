package io.github.ratelimit.bucket;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.bucket.BucketRegistry.InvalidBucketException;
import io.github.ratelimit.bucket.BucketRegistry.LimitChange;

/**
 * Live changes of bucket limits: sets and clears overrides (checked exactly as
 * configuration is, with the checks the bucket's users make of its limits at startup),
 * keeps them in a {@link LiveLimitsStore}, and applies what the store holds to the
 * {@link BucketRegistry}, which updates each bucket in place. Every change applied is
 * logged at INFO on every instance: the bucket, who set it and when, and the limits
 * before and after.
 * <p>
 * An override is laid over {@code ratelimit.buckets.<name>} field by field, as if it were
 * the highest-precedence configuration. Setting {@code limit} (or {@code limits}) of a
 * bucket with a {@code limitExpression} makes the override win over the per-call limit,
 * as configuration does; an override of the window only keeps the per-call limit.
 * <p>
 * With a shared store, {@link #refresh()} (called about once a second) picks up what
 * other instances changed; a change made here applies here at once. A change is merged
 * with the override the store holds, not with what this instance last read, and saved
 * only if that override is still there: two changes made at the same time on two
 * instances are both kept.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class LiveLimits {

	private static final Log logger = LogFactory.getLog(LiveLimits.class);

	/** How many times a change is read, merged and saved before it gives up. */
	private static final int MAX_ATTEMPTS = 10;

	private static final String CHANGED_BY = "by";

	private static final String CHANGED_AT = "at";

	/** Prefix of a setting in the stored text, apart from who and when. */
	private static final String FIELD = "f.";

	private final BucketRegistry registry;

	private final LiveLimitsStore store;

	private final LimitSettingsParser parser;

	private final boolean writeEnabled;

	private final Clock clock;

	private long appliedVersion = -1;

	private Map<String, String> unreadable = Map.of();

	/** Who is clearing a bucket's override on this instance, by bucket name. */
	private final Map<String, String> clearing = new ConcurrentHashMap<>();

	/**
	 * Creates the live limits.
	 * @param registry the buckets to update
	 * @param store where overrides are kept
	 * @param parser reads settings the way configuration is read
	 * @param writeEnabled whether overrides may be set and cleared here
	 * ({@code ratelimit.endpoint.limits-write-enabled}); they are applied either way
	 * @param clock the clock for when a change was made
	 */
	public LiveLimits(BucketRegistry registry, LiveLimitsStore store, LimitSettingsParser parser, boolean writeEnabled,
			Clock clock) {
		this.registry = Objects.requireNonNull(registry, "'registry' must not be null");
		this.store = Objects.requireNonNull(store, "'store' must not be null");
		this.parser = Objects.requireNonNull(parser, "'parser' must not be null");
		this.writeEnabled = writeEnabled;
		this.clock = Objects.requireNonNull(clock, "'clock' must not be null");
	}

	/**
	 * Returns whether overrides are shared with other instances (a Redis store).
	 * @return {@code false} when they apply to this instance only
	 */
	public boolean shared() {
		return this.store.shared();
	}

	/**
	 * Changes a bucket's limits, and applies the change here: the settings are added to
	 * those of earlier changes (a setting given again replaces the earlier value) until
	 * the bucket's override is {@link #clear cleared}. The earlier changes are those the
	 * store holds when the change is made, whichever instance made them: the change is
	 * merged with them, checked, and saved only if they are still what the store holds,
	 * else merged, checked and saved again (up to {@value #MAX_ATTEMPTS} times), so two
	 * changes made at the same time are both kept.
	 * @param bucket the bucket name
	 * @param fields the settings, by property name relative to
	 * {@code ratelimit.buckets.<bucket>} ({@code limit}, {@code window}, {@code burst},
	 * {@code segments}, {@code algorithm}, or {@code limits[i].<same>} for one of the
	 * limits of a bucket that has several)
	 * @param changedBy who asks for the change
	 * @return the bucket as it is now
	 * @throws ChangeRejectedException when writes are off, the bucket is unknown, a
	 * setting is invalid, or the store cannot save the change
	 */
	public BucketDefinition set(String bucket, Map<String, String> fields, String changedBy) {
		checkWritable();
		if (fields.isEmpty()) {
			throw new ChangeRejectedException(ChangeRejectedException.Reason.INVALID,
					"ratelimit.buckets." + bucket + ": set at least one of " + fieldList());
		}
		if (this.registry.find(bucket) == null) {
			throw unknown(bucket);
		}
		for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
			String stored = read(bucket);
			LimitOverride override = merge(bucket, stored, fields, changedBy);
			if (compareAndSet(bucket, stored, encode(override))) {
				refresh();
				return Objects.requireNonNull(this.registry.find(bucket));
			}
		}
		throw contended(bucket);
	}

	/**
	 * Lists the settings a change can set, for messages.
	 * @return e.g.
	 * {@code limit, window, burst, segments, penalty, calendar, zone or algorithm}
	 */
	public static String fieldList() {
		List<String> fields = LimitSettings.FIELDS;
		return String.join(", ", fields.subList(0, fields.size() - 1)) + " or " + fields.get(fields.size() - 1);
	}

	/**
	 * Clears a bucket's override, so that its own limits apply again, here at once. What
	 * is cleared is the override the store holds when it is read; should another change
	 * be saved in between, that one is read and cleared instead.
	 * @param bucket the bucket name
	 * @param changedBy who asks for the change
	 * @return the bucket as it is now
	 * @throws ChangeRejectedException when writes are off, the bucket is unknown, or the
	 * store cannot clear the override
	 */
	public BucketDefinition clear(String bucket, String changedBy) {
		checkWritable();
		if (this.registry.find(bucket) == null) {
			throw unknown(bucket);
		}
		// The poll may apply the removal before this thread does: either names who
		// cleared it (the store keeps no trace of a cleared override).
		this.clearing.put(bucket, changedBy);
		try {
			for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
				String stored = read(bucket);
				if (stored == null || compareAndSet(bucket, stored, null)) {
					refresh();
					return Objects.requireNonNull(this.registry.find(bucket));
				}
			}
			throw contended(bucket);
		}
		finally {
			this.clearing.remove(bucket, changedBy);
		}
	}

	/**
	 * Lays a change over the bucket's stored override and checks the result exactly as
	 * configuration is checked, with every check its users make of its limits.
	 */
	private LimitOverride merge(String bucket, @Nullable String stored, Map<String, String> fields, String changedBy) {
		Map<String, String> all = new LinkedHashMap<>();
		if (stored != null) {
			all.putAll(storedFields(bucket, stored));
		}
		all.putAll(fields);
		try {
			LimitOverride override = new LimitOverride(all, this.parser.parse(bucket, all), changedBy,
					this.clock.instant());
			if (this.registry.preview(bucket, override) == null) {
				throw unknown(bucket);
			}
			return override;
		}
		catch (IllegalArgumentException | InvalidBucketException ex) {
			throw new ChangeRejectedException(ChangeRejectedException.Reason.INVALID, String.valueOf(ex.getMessage()));
		}
	}

	private Map<String, String> storedFields(String bucket, String stored) {
		try {
			return decode(bucket, stored).fields();
		}
		catch (IllegalArgumentException ex) {
			// Written by another version of the application, or by hand: merging with
			// what this one cannot read would drop or garble it.
			throw new ChangeRejectedException(ChangeRejectedException.Reason.INVALID,
					"The change of bucket '" + bucket + "' that the store holds cannot be read here (" + ex.getMessage()
							+ "); clear it (DELETE /actuator/ratelimits/" + bucket + ") and make the change again");
		}
	}

	private @Nullable String read(String bucket) {
		try {
			return this.store.read(bucket);
		}
		catch (RuntimeException ex) {
			throw unavailable(ex);
		}
	}

	private boolean compareAndSet(String bucket, @Nullable String expected, @Nullable String override) {
		try {
			return this.store.compareAndSet(bucket, expected, override);
		}
		catch (RuntimeException ex) {
			throw unavailable(ex);
		}
	}

	/**
	 * Applies what the store holds, when it changed since the last time: each bucket
	 * whose override was set, changed or cleared is updated, and the change logged.
	 * @throws RuntimeException when the store cannot answer; nothing changes then
	 */
	public synchronized void refresh() {
		long version = this.store.version();
		if (version == this.appliedVersion) {
			return;
		}
		Map<String, String> stored = this.store.load();
		Map<String, LimitOverride> overrides = new LinkedHashMap<>();
		Map<String, String> unreadable = new LinkedHashMap<>();
		stored.forEach((bucket, text) -> {
			try {
				overrides.put(bucket, decode(bucket, text));
			}
			catch (IllegalArgumentException ex) {
				unreadable.put(bucket, text);
				if (!text.equals(this.unreadable.get(bucket))) {
					logger.warn("Live override of bucket '" + bucket + "' not applied: " + ex.getMessage());
				}
			}
		});
		this.unreadable = unreadable;
		List<LimitChange> changes = this.registry.override(overrides);
		this.appliedVersion = version;
		for (LimitChange change : changes) {
			log(change);
		}
	}

	private void log(LimitChange change) {
		LimitOverride override = change.override();
		if (change.error() != null) {
			logger.warn("Live override of bucket '"
					+ change.bucket() + "' not applied" + ((override != null)
							? " (set by " + override.changedBy() + " at " + override.changedAt() + ")" : "")
					+ ": " + change.error() + "; the limits stay " + change.before());
		}
		else if (override != null) {
			logger.info("Live override of bucket '" + change.bucket() + "' by " + override.changedBy() + " at "
					+ override.changedAt() + " " + override.fields() + ": limits " + change.before() + " -> "
					+ change.after());
		}
		else {
			String clearedBy = this.clearing.get(change.bucket());
			logger.info("Live override of bucket '" + change.bucket() + "' cleared"
					+ ((clearedBy != null) ? " by " + clearedBy : "") + ": limits " + change.before() + " -> "
					+ change.after());
		}
	}

	private void checkWritable() {
		if (!this.writeEnabled) {
			throw new ChangeRejectedException(ChangeRejectedException.Reason.DISABLED,
					"Live limit changes are off. Set ratelimit.endpoint.limits-write-enabled=true on the instances"
							+ " that may change limits, where the actuator is secured");
		}
	}

	private static ChangeRejectedException unknown(String bucket) {
		return new ChangeRejectedException(ChangeRejectedException.Reason.UNKNOWN_BUCKET,
				"No bucket '" + bucket + "': neither code nor ratelimit.buckets defines it");
	}

	private static ChangeRejectedException contended(String bucket) {
		return new ChangeRejectedException(ChangeRejectedException.Reason.CONTENDED,
				"Other changes of bucket '" + bucket + "' were saved first " + MAX_ATTEMPTS
						+ " times in a row while this one was being made; nothing changed. Send it again");
	}

	private static ChangeRejectedException unavailable(RuntimeException ex) {
		return new ChangeRejectedException(ChangeRejectedException.Reason.UNAVAILABLE,
				"The change could not be saved (" + ex + "); nothing changed. Try again once the store answers");
	}

	private static String encode(LimitOverride override) {
		StringBuilder text = new StringBuilder();
		append(text, CHANGED_BY, override.changedBy());
		append(text, CHANGED_AT, override.changedAt().toString());
		override.fields().forEach((name, value) -> append(text, FIELD + name, value));
		return text.toString();
	}

	private static void append(StringBuilder text, String name, String value) {
		if (!text.isEmpty()) {
			text.append('&');
		}
		text.append(URLEncoder.encode(name, StandardCharsets.UTF_8))
			.append('=')
			.append(URLEncoder.encode(value, StandardCharsets.UTF_8));
	}

	private LimitOverride decode(String bucket, String text) {
		Map<String, String> fields = new LinkedHashMap<>();
		String changedBy = "unknown";
		Instant changedAt = Instant.EPOCH;
		for (String pair : text.split("&")) {
			int equals = pair.indexOf('=');
			if (equals < 0) {
				throw new IllegalArgumentException("'" + text + "' is not an override written by this library");
			}
			String name = URLDecoder.decode(pair.substring(0, equals), StandardCharsets.UTF_8);
			String value = URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
			if (name.equals(CHANGED_BY)) {
				changedBy = value;
			}
			else if (name.equals(CHANGED_AT)) {
				changedAt = instant(value);
			}
			else if (name.startsWith(FIELD)) {
				fields.put(name.substring(FIELD.length()), value);
			}
		}
		return new LimitOverride(fields, this.parser.parse(bucket, fields), changedBy, changedAt);
	}

	private static Instant instant(String value) {
		try {
			return Instant.parse(value);
		}
		catch (DateTimeParseException ex) {
			throw new IllegalArgumentException("'" + value + "' is not an instant", ex);
		}
	}

	/**
	 * A live change that was not made; the message says why and what to do.
	 */
	public static final class ChangeRejectedException extends RuntimeException {

		private static final long serialVersionUID = 1L;

		private final Reason reason;

		/**
		 * Creates the exception.
		 * @param reason why the change was not made
		 * @param message what to do about it
		 */
		public ChangeRejectedException(Reason reason, String message) {
			super(message);
			this.reason = reason;
		}

		/**
		 * Returns why the change was not made.
		 * @return the reason
		 */
		public Reason getReason() {
			return this.reason;
		}

		/**
		 * Why a change was not made.
		 */
		public enum Reason {

			/** Writes are off ({@code ratelimit.endpoint.limits-write-enabled}). */
			DISABLED,

			/** No bucket of that name. */
			UNKNOWN_BUCKET,

			/** A setting is invalid; the message names its property. */
			INVALID,

			/** The store could not save the change. */
			UNAVAILABLE,

			/**
			 * Other changes of the same bucket were saved first, every time the change
			 * was tried; sending it again may succeed.
			 */
			CONTENDED

		}

	}

}
