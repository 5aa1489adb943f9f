package io.github.ratelimit.actuate;

import java.security.Principal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import io.github.ratelimit.Decision;
import io.github.ratelimit.Durations;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
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
 *
 * @author ratelimit-spring-boot-starter authors
 */
@Endpoint(id = "ratelimits")
public class RateLimitsEndpoint {

	private final BucketRegistry registry;

	private final RateLimitStore store;

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
		this.registry = registry;
		this.store = store;
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
			RateLimitStatistics.Counts counts = this.statistics.get(bucket.name());
			buckets.add(new BucketDescriptor(bucket.name(), bucket.source().name().toLowerCase(Locale.ROOT),
					bucket.mode().name().toLowerCase(Locale.ROOT), limits(bucket.limits()),
					counts.count(Outcome.ALLOWED), counts.count(Outcome.WAITED), counts.count(Outcome.REJECTED),
					counts.count(Outcome.SHADOW_REJECTED), counts.count(Outcome.ERROR)));
			putOverride(overrides, bucket);
		}
		StoreStatus status = this.status.status();
		return new RateLimitsDescriptor(
				new StoreDescriptor(status.store(), status.failureMode().name().toLowerCase(Locale.ROOT),
						status.degraded() ? "degraded" : "healthy", status.failures(), status.localRejections()),
				buckets, overrides);
	}

	/**
	 * Reads one key's state without taking a permit.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return the state, or {@code null} (404) for an unknown bucket
	 */
	@ReadOperation
	public @Nullable KeyDescriptor key(@Selector String bucket, @Selector String key) {
		BucketDefinition definition = this.registry.find(bucket);
		if (definition == null) {
			return null;
		}
		Decision decision = this.store.peek(bucket, key, definition.limits());
		List<LimitStateDescriptor> limits = new ArrayList<>();
		List<Decision> perLimit = decision.limits();
		for (int i = 0; i < perLimit.size(); i++) {
			Decision limit = perLimit.get(i);
			limits.add(new LimitStateDescriptor(limit(definition.limits().get(i)), limit.remaining(),
					millis(limit.resetAfterMicros()), limit.allowed() ? 0 : millis(limit.retryAfterMicros())));
		}
		return new KeyDescriptor(bucket, key, decision.allowed(), decision.remaining(),
				millis(decision.resetAfterMicros()), decision.allowed() ? 0 : millis(decision.retryAfterMicros()),
				limits);
	}

	/**
	 * Forgets one key's state, so its limits are full again.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return {@code true}, or {@code null} (404) for an unknown bucket
	 */
	@DeleteOperation
	public @Nullable Boolean reset(@Selector String bucket, @Selector String key) {
		BucketDefinition definition = this.registry.find(bucket);
		if (definition == null) {
			return null;
		}
		this.store.reset(bucket, key, definition.limits());
		return Boolean.TRUE;
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
			@Nullable String burst, @Nullable String segments, @Nullable String algorithm, @Nullable String index,
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

	private static List<LimitDescriptor> limits(List<LimitSpec> specs) {
		return specs.stream().map(RateLimitsEndpoint::limit).toList();
	}

	private static LimitDescriptor limit(LimitSpec spec) {
		return new LimitDescriptor(spec.algorithm().propertyValue(), spec.limit(), Durations.format(spec.window()),
				spec.algorithm().usesBurst() ? spec.burst() : null);
	}

	private static long millis(long micros) {
		return (micros == Decision.NEVER) ? -1 : (micros + 999) / 1000;
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
	 * @param limits the limits
	 * @param allowed requests allowed at once since startup
	 * @param waited requests allowed after waiting for a permit ({@code onLimit = WAIT},
	 * {@code RateLimiter.acquire}) since startup
	 * @param rejected rejected requests since startup (after any wait)
	 * @param shadowRejected requests a shadow bucket would have rejected
	 * @param errors requests the store could not decide
	 */
	public record BucketDescriptor(String name, String source, String mode, List<LimitDescriptor> limits, long allowed,
			long waited, long rejected, long shadowRejected, long errors) {
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
	 * @param limit permits per window
	 * @param window the window, e.g. {@code 1m}
	 * @param burst the burst, for algorithms that have one
	 */
	public record LimitDescriptor(String algorithm, long limit, String window, @Nullable Long burst) {
	}

	/**
	 * One key's state.
	 *
	 * @param bucket the bucket
	 * @param key the key
	 * @param allowed whether a request of cost 1 would be allowed now
	 * @param remaining permits left in the most restrictive limit
	 * @param resetAfterMillis time until every limit is full again
	 * @param retryAfterMillis time until a request would be allowed, 0 when it is now, -1
	 * for never
	 * @param limits the state of each limit
	 */
	public record KeyDescriptor(String bucket, String key, boolean allowed, long remaining, long resetAfterMillis,
			long retryAfterMillis, List<LimitStateDescriptor> limits) {
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
