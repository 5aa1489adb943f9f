package io.github.ratelimit.actuate;

import java.security.Principal;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import io.github.ratelimit.Durations;
import io.github.ratelimit.InvalidLimitSpecException;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.KeyState;
import io.github.ratelimit.bucket.KeyStateReader;
import io.github.ratelimit.bucket.LimitOverride;
import io.github.ratelimit.bucket.LiveLimits;
import io.github.ratelimit.bucket.LiveLimits.ChangeRejectedException;
import io.github.ratelimit.status.StoreStatus;
import io.github.ratelimit.status.StoreStatusSource;
import io.github.ratelimit.store.RateLimitStore;

/**
 * {@code /actuator/ratelimits}: every bucket with its limits, source and counts, the
 * store and its failure state; one key's state without consuming ({@code GET
 * /actuator/ratelimits/{bucket}/{key}}); resetting one key ({@code DELETE}); and, when
 * {@code ratelimit.endpoint.limits-write-enabled} is set, changing a bucket's limits at
 * runtime ({@code POST /actuator/ratelimits/{bucket}}) and clearing that change
 * ({@code DELETE /actuator/ratelimits/{bucket}}). A key's reset does not clear a live
 * change of its bucket's limits.
 * <p>
 * Read-only unless the application opens it: a reset lifts a limit and a live change
 * applies to every instance, so the write operations exist only with
 * {@code management.endpoint.ratelimits.access=unrestricted}. Until then Spring Boot
 * answers them as operations the endpoint does not have.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@Endpoint(id = RateLimitsEndpoint.ID, defaultAccess = Access.READ_ONLY)
public class RateLimitsEndpoint {

	/** The endpoint's id. */
	public static final String ID = "ratelimits";

	private final BucketRegistry registry;

	private final RateLimitStore store;

	private final KeyStateReader keys;

	private final RateLimitStatistics statistics;

	private final StoreStatusSource status;

	private final @Nullable LiveLimits liveLimits;

	/**
	 * Creates the endpoint, without live limit changes.
	 * @param registry the buckets
	 * @param store the store
	 * @param statistics counts per bucket
	 * @param status the store's failure state
	 */
	public RateLimitsEndpoint(BucketRegistry registry, RateLimitStore store, RateLimitStatistics statistics,
			StoreStatusSource status) {
		this(registry, store, statistics, status, null);
	}

	/**
	 * Creates the endpoint.
	 * @param registry the buckets
	 * @param store the store
	 * @param statistics counts per bucket
	 * @param status the store's failure state
	 * @param liveLimits live limit changes, or {@code null} to refuse them
	 */
	public RateLimitsEndpoint(BucketRegistry registry, RateLimitStore store, RateLimitStatistics statistics,
			StoreStatusSource status, @Nullable LiveLimits liveLimits) {
		this(registry, store, new KeyStateReader(store), statistics, status, liveLimits);
	}

	/**
	 * Creates the endpoint, reading keys through a reader shared with the status
	 * endpoint.
	 * @param registry the buckets
	 * @param store the store, for resets
	 * @param keys reads a key's state without taking a permit, from {@code store}
	 * @param statistics counts per bucket
	 * @param status the store's failure state
	 * @param liveLimits live limit changes, or {@code null} to refuse them
	 */
	public RateLimitsEndpoint(BucketRegistry registry, RateLimitStore store, KeyStateReader keys,
			RateLimitStatistics statistics, StoreStatusSource status, @Nullable LiveLimits liveLimits) {
		this.registry = registry;
		this.store = store;
		this.keys = keys;
		this.statistics = statistics;
		this.status = status;
		this.liveLimits = liveLimits;
	}

	/**
	 * Lists the store and every bucket.
	 * @return the descriptor
	 */
	@ReadOperation
	public RateLimitsDescriptor rateLimits() {
		List<BucketDescriptor> buckets = new ArrayList<>();
		Map<String, OverrideDescriptor> overrides = new LinkedHashMap<>();
		for (BucketDefinition bucket : this.registry.buckets()) {
			buckets.add(bucket(bucket));
			putOverride(overrides, bucket);
		}
		StoreStatus status = this.status.status();
		return new RateLimitsDescriptor(
				new StoreDescriptor(status.store(), status.failureMode().name().toLowerCase(Locale.ROOT),
						status.degraded() ? "degraded" : "healthy", status.failures(), status.localRejections()),
				buckets, overrides);
	}

	/**
	 * Reads one key's state without taking a permit. The limit of a bucket with a
	 * per-call {@code limitExpression} depends on the call: without {@code limit} the
	 * answer says so and reads nothing, with it the key is read with that limit.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limit the permits per window that apply to this key, for a bucket whose
	 * limit is set per call; {@code null} otherwise
	 * @param zone the time zone of this key's calendar windows, for a bucket whose zone
	 * is set per call ({@code zoneExpression}); {@code null} for the bucket's own zone
	 * @return the state, or {@code null} (404) for an unknown bucket
	 * @throws InvalidEndpointRequestException (400) for a {@code limit} no limit may
	 * have, or given for a bucket whose limits do not depend on the call; for a
	 * {@code zone} that is none, or given for a bucket without a calendar window
	 */
	@ReadOperation
	public @Nullable KeyDescriptor key(@Selector String bucket, @Selector String key, @Nullable Long limit,
			@Nullable String zone) {
		BucketDefinition definition = this.registry.find(bucket);
		if (definition == null) {
			return null;
		}
		String perCall = this.registry.perCallLimit(bucket);
		List<LimitSpec> specs = definition.limits();
		if (limit != null) {
			if (perCall == null) {
				throw new InvalidEndpointRequestException(
						"Bucket '" + bucket + "' has the same limits for every " + "call; read it without 'limit'",
						"limit does not apply to bucket '" + bucket + "'");
			}
			try {
				specs = definition.limitsWith(limit);
			}
			catch (InvalidLimitSpecException ex) {
				throw new InvalidEndpointRequestException(String.valueOf(ex.getMessage()),
						ex.getField() + " " + ex.getReason());
			}
		}
		else if (perCall != null) {
			return new KeyDescriptor(bucket, key, null, null, null, null, List.of(), perCall);
		}
		KeyState state = this.keys.read(bucket, key, inZone(definition, specs, zone));
		List<LimitStateDescriptor> limits = new ArrayList<>();
		for (KeyState.LimitState limitState : state.limits()) {
			limits.add(new LimitStateDescriptor(limit(limitState.spec()), limitState.remaining(),
					limitState.resetAfterMillis(), limitState.retryAfterMillis()));
		}
		return new KeyDescriptor(bucket, key, state.allowed(), state.remaining(), state.resetAfterMillis(),
				state.retryAfterMillis(), limits, perCall);
	}

	/**
	 * Forgets one key's state, so its limits are full again.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param zone the time zone of this key's calendar windows, for a bucket whose zone
	 * is set per call; {@code null} for the bucket's own zone
	 * @return {@code true}, or {@code null} (404) for an unknown bucket
	 * @throws InvalidEndpointRequestException (400) for a {@code zone} that is none, or
	 * given for a bucket without a calendar window
	 */
	@DeleteOperation
	public @Nullable Boolean reset(@Selector String bucket, @Selector String key, @Nullable String zone) {
		BucketDefinition definition = this.registry.find(bucket);
		if (definition == null) {
			return null;
		}
		this.store.reset(bucket, key, inZone(definition, definition.limits(), zone));
		return Boolean.TRUE;
	}

	/**
	 * The limits of a key whose calendar windows count in {@code zone}: a
	 * {@code zoneExpression} gives each call's key its own, which is another state.
	 */
	private static List<LimitSpec> inZone(BucketDefinition definition, List<LimitSpec> specs, @Nullable String zone) {
		if (zone == null) {
			return specs;
		}
		if (specs.stream().noneMatch((spec) -> spec.calendar() != null)) {
			throw new InvalidEndpointRequestException(
					"Bucket '" + definition.name() + "' has no calendar window; read or reset it without 'zone'",
					"zone does not apply to bucket '" + definition.name() + "'");
		}
		try {
			return definition.limitsIn(specs, ZoneId.of(zone.trim()));
		}
		catch (DateTimeException ex) {
			throw new InvalidEndpointRequestException(
					"'" + zone + "' is not a time zone (" + ex.getMessage()
							+ "); use an IANA id such as Europe/Berlin or America/New_York, or UTC",
					"zone is not a time zone");
		}
	}

	/**
	 * Changes a bucket's limits at runtime, on every instance that shares the store: the
	 * settings are those of {@code ratelimit.buckets.<bucket>}, checked the same way, and
	 * laid over them until cleared.
	 * @param bucket the bucket name
	 * @param limit permits per window
	 * @param window the window, e.g. {@code 1m}
	 * @param burst the burst
	 * @param segments the sliding window counter segments
	 * @param penalty how long a key is blocked once the limit rejects it, e.g.
	 * {@code 15m}
	 * @param calendar a calendar window instead of the window, e.g. {@code month}
	 * @param zone the time zone of a calendar window, e.g. {@code Europe/Berlin}
	 * @param algorithm the algorithm, e.g. {@code sliding-log}
	 * @param index which limit to change, for a bucket with several
	 * ({@code ratelimit.buckets.<bucket>.limits[index]})
	 * @param securityContext who asks
	 * @return the bucket as it is now
	 * @throws ChangeRejectedException when live changes are off, the bucket is unknown or
	 * a setting is invalid
	 */
	@WriteOperation
	public LiveChangeDescriptor setLimits(@Selector String bucket, @Nullable String limit, @Nullable String window,
			@Nullable String burst, @Nullable String segments, @Nullable String penalty, @Nullable String calendar,
			@Nullable String zone, @Nullable String algorithm, @Nullable String index,
			SecurityContext securityContext) {
		if (index != null && !index.matches("\\d{1,3}")) {
			throw new ChangeRejectedException(ChangeRejectedException.Reason.INVALID, "ratelimit.buckets." + bucket
					+ ".limits: 'index' must be the position of a limit (0, 1, ...) but was '" + index + "'");
		}
		String prefix = (index != null) ? "limits[" + index + "]." : "";
		Map<String, String> fields = new LinkedHashMap<>();
		put(fields, prefix + "algorithm", algorithm);
		put(fields, prefix + "limit", limit);
		put(fields, prefix + "window", window);
		put(fields, prefix + "burst", burst);
		put(fields, prefix + "segments", segments);
		put(fields, prefix + "penalty", penalty);
		put(fields, prefix + "calendar", calendar);
		put(fields, prefix + "zone", zone);
		return change(liveLimits().set(bucket, fields, changedBy(securityContext)));
	}

	/**
	 * Clears a bucket's live change, so that its own limits apply again on every instance
	 * that shares the store.
	 * @param bucket the bucket name
	 * @param securityContext who asks
	 * @return the bucket as it is now
	 * @throws ChangeRejectedException when live changes are off or the bucket is unknown
	 */
	@DeleteOperation
	public LiveChangeDescriptor clearLimits(@Selector String bucket, SecurityContext securityContext) {
		return change(liveLimits().clear(bucket, changedBy(securityContext)));
	}

	private LiveLimits liveLimits() {
		if (this.liveLimits == null) {
			throw new ChangeRejectedException(ChangeRejectedException.Reason.DISABLED,
					"This endpoint was created without live limit changes");
		}
		return this.liveLimits;
	}

	private LiveChangeDescriptor change(BucketDefinition bucket) {
		LimitOverride override = bucket.override();
		return new LiveChangeDescriptor(bucket.name(), bucket.source().name().toLowerCase(Locale.ROOT),
				bucket.limits().stream().map(RateLimitsEndpoint::limit).toList(),
				(override != null) ? override(override) : null,
				liveLimits().shared() ? "every instance on this Redis" : "this instance only");
	}

	private static void putOverride(Map<String, OverrideDescriptor> overrides, BucketDefinition bucket) {
		LimitOverride override = bucket.override();
		if (override != null) {
			overrides.put(bucket.name(), override(override));
		}
	}

	private static OverrideDescriptor override(LimitOverride override) {
		return new OverrideDescriptor(override.fields(), override.changedBy(), override.changedAt());
	}

	private static void put(Map<String, String> fields, String name, @Nullable String value) {
		if (value != null) {
			fields.put(name, value);
		}
	}

	private static String changedBy(SecurityContext securityContext) {
		Principal principal = securityContext.getPrincipal();
		return (principal != null) ? principal.getName() : "anonymous";
	}

	private BucketDescriptor bucket(BucketDefinition bucket) {
		RateLimitStatistics.Counts counts = this.statistics.get(bucket.name());
		// A limit that configuration (or a live change) sets wins over a limitExpression.
		String perCall = bucket.limitConfigured() ? null : this.registry.perCallLimit(bucket.name());
		return new BucketDescriptor(bucket.name(), bucket.source().name().toLowerCase(Locale.ROOT),
				bucket.mode().name().toLowerCase(Locale.ROOT), limits(bucket.limits(), perCall != null), perCall,
				counts.count(Outcome.ALLOWED), counts.count(Outcome.WAITED), counts.count(Outcome.REJECTED),
				counts.count(Outcome.SHADOW_REJECTED), counts.count(Outcome.ERROR), counts.penalties(),
				(counts.settlements() == 0) ? null : new SettlementsDescriptor(counts.settlements(), counts.reserved(),
						counts.used(), counts.excess(), counts.owed()));
	}

	/**
	 * Describes the limits; with {@code perCall} the first limit's permits (and its
	 * burst, when it follows them) are left out: they come from each call.
	 */
	private static List<LimitDescriptor> limits(List<LimitSpec> specs, boolean perCall) {
		List<LimitDescriptor> limits = new ArrayList<>(specs.size());
		for (int i = 0; i < specs.size(); i++) {
			LimitSpec spec = specs.get(i);
			LimitDescriptor limit = limit(spec);
			if (i == 0 && perCall) {
				limit = new LimitDescriptor(limit.algorithm(), null, limit.window(),
						(spec.burst() == spec.limit()) ? null : limit.burst(), limit.penalty(), limit.calendar(),
						limit.zone());
			}
			limits.add(limit);
		}
		return limits;
	}

	private static LimitDescriptor limit(LimitSpec spec) {
		return new LimitDescriptor(spec.algorithm().propertyValue(), spec.limit(), Durations.format(spec.window()),
				spec.algorithm().usesBurst() ? spec.burst() : null,
				spec.penalty().isZero() ? null : Durations.format(spec.penalty()),
				(spec.calendar() != null) ? spec.calendar().propertyValue() : null,
				(spec.calendar() != null) ? spec.zone().getId() : null);
	}

	/**
	 * The store and every bucket.
	 *
	 * @param store the store and its failure state
	 * @param buckets the buckets
	 * @param overrides the live changes of bucket limits that apply, by bucket name
	 */
	public record RateLimitsDescriptor(StoreDescriptor store, List<BucketDescriptor> buckets,
			Map<String, OverrideDescriptor> overrides) {
	}

	/**
	 * The store.
	 *
	 * @param name {@code redis} or {@code memory}
	 * @param failureMode {@code fallback}, {@code open} or {@code closed}
	 * @param state {@code healthy}, or {@code degraded} while the failure mode applies
	 * @param failures failed store calls since startup
	 * @param localRejections requests rejected since startup without a store call, from a
	 * rejection the store had just made
	 */
	public record StoreDescriptor(String name, String failureMode, String state, long failures, long localRejections) {
	}

	/**
	 * One bucket.
	 *
	 * @param name the bucket name
	 * @param source {@code annotation}, {@code configuration}, {@code filter},
	 * {@code programmatic}, or {@code override} while a live change applies
	 * @param mode {@code enforce} or {@code shadow}
	 * @param limits the limits; the first one's {@code limit} is {@code null} when
	 * {@code limitPerCall} sets it
	 * @param limitPerCall the {@code limitExpression} that sets the first limit's permits
	 * per call, or {@code null} when the limits apply as shown
	 * @param allowed requests allowed at once since startup
	 * @param waited requests allowed after waiting for a permit ({@code onLimit = WAIT},
	 * {@code RateLimiter.acquire}) since startup
	 * @param rejected rejected requests since startup (after any wait)
	 * @param shadowRejected requests a shadow bucket would have rejected
	 * @param errors requests the store could not decide
	 * @param penaltiesStarted rejections since startup that blocked their key for a
	 * limit's {@code penalty}
	 * @param settled the reservations settled since startup, or {@code null} when none
	 * was
	 */
	public record BucketDescriptor(String name, String source, String mode, List<LimitDescriptor> limits,
			@Nullable String limitPerCall, long allowed, long waited, long rejected, long shadowRejected, long errors,
			long penaltiesStarted, @Nullable SettlementsDescriptor settled) {
	}

	/**
	 * The reservations of a bucket settled since startup (on this instance).
	 *
	 * @param settlements how many were settled
	 * @param reserved the permits they took up front (their estimates)
	 * @param used the permits they really used
	 * @param excess the permits used beyond what was reserved: taken even past the limit,
	 * into debt when it had less left
	 * @param owed the permits of the excess that keys owe: those a limit did not have
	 * left (the key is rejected until they have come back at the limit's rate)
	 */
	public record SettlementsDescriptor(long settlements, long reserved, long used, long excess, long owed) {
	}

	/**
	 * A live change of a bucket's limits.
	 *
	 * @param settings what was set, as {@code ratelimit.buckets.<name>} properties
	 * @param changedBy who set it: the authenticated principal, or {@code anonymous}
	 * @param changedAt when
	 */
	public record OverrideDescriptor(Map<String, String> settings, String changedBy, Instant changedAt) {
	}

	/**
	 * A bucket after a live change.
	 *
	 * @param bucket the bucket name
	 * @param source {@code override} while a live change applies, else where the limits
	 * come from
	 * @param limits the limits as they apply now
	 * @param override the live change, or {@code null} once cleared
	 * @param appliesTo {@code every instance on this Redis}, or
	 * {@code this instance only} with the in-memory store
	 */
	public record LiveChangeDescriptor(String bucket, String source, List<LimitDescriptor> limits,
			@Nullable OverrideDescriptor override, String appliesTo) {
	}

	/**
	 * One limit.
	 *
	 * @param algorithm the algorithm, kebab case
	 * @param limit permits per window, or {@code null} when each call sets it
	 * @param window the window, e.g. {@code 1m}
	 * @param burst the burst, for algorithms that have one
	 * @param penalty how long a key is blocked once the limit rejects it, e.g.
	 * {@code 15m}; {@code null} for none
	 * @param calendar the calendar unit of a calendar window, e.g. {@code month}
	 * ({@code window} is then its longest length); {@code null} for none
	 * @param zone the time zone of a calendar window; {@code null} for none
	 */
	public record LimitDescriptor(String algorithm, @Nullable Long limit, String window, @Nullable Long burst,
			@Nullable String penalty, @Nullable String calendar, @Nullable String zone) {
	}

	/**
	 * One key's state.
	 *
	 * @param bucket the bucket
	 * @param key the key
	 * @param allowed whether a request of cost 1 would be allowed now; {@code null} when
	 * the limit depends on the call and none was given
	 * @param remaining permits left in the most restrictive limit, or {@code null}
	 * likewise
	 * @param resetAfterMillis time until every limit is full again, or {@code null}
	 * likewise
	 * @param retryAfterMillis time until a request would be allowed, 0 when it is now, -1
	 * for never, or {@code null} likewise
	 * @param limits the state of each limit, empty when not read
	 * @param limitPerCall the {@code limitExpression} that sets the bucket's limit per
	 * call (read with {@code ?limit=} the key's limit), or {@code null}
	 */
	public record KeyDescriptor(String bucket, String key, @Nullable Boolean allowed, @Nullable Long remaining,
			@Nullable Long resetAfterMillis, @Nullable Long retryAfterMillis, List<LimitStateDescriptor> limits,
			@Nullable String limitPerCall) {
	}

	/**
	 * One limit's state for a key.
	 *
	 * @param limit the limit
	 * @param remaining permits left
	 * @param resetAfterMillis time until the limit is full again
	 * @param retryAfterMillis time until a request would be allowed by this limit
	 */
	public record LimitStateDescriptor(LimitDescriptor limit, long remaining, long resetAfterMillis,
			long retryAfterMillis) {
	}

}
