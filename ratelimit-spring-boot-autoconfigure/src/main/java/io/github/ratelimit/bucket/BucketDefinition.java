package io.github.ratelimit.bucket;

import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.InvalidLimitSpecException;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;

/**
 * A bucket as the application defines it: the {@link Bucket} the acquirer enforces (name,
 * limits, mode), where its limits come from, and the per-call variants of its limits that
 * a {@code limitExpression} asks for.
 * <p>
 * One definition per bucket name lives as long as the application: a live change of the
 * bucket's limits ({@link LiveLimits}) updates it in place, so what holds it (an
 * annotated method, a filter rule, a direct-API limiter) decides with the new limits from
 * its next call on.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class BucketDefinition {

	/**
	 * Per-call limits from a {@code limitExpression} are cached up to this many values.
	 */
	private static final int MAX_CACHED_LIMITS = 1024;

	private volatile Current current;

	/**
	 * Creates a definition.
	 * @param name the bucket name
	 * @param limits the limits, at least one
	 * @param mode enforce or shadow
	 * @param source where the limits come from
	 */
	public BucketDefinition(String name, List<LimitSpec> limits, LimitMode mode, BucketSource source) {
		this(new Bucket(name, limits, mode), source, false);
	}

	/**
	 * Creates a definition.
	 * @param bucket the bucket
	 * @param source where the limits come from
	 * @param limitConfigured whether configuration sets the limit itself, which then wins
	 * over a per-call {@code limitExpression}
	 */
	public BucketDefinition(Bucket bucket, BucketSource source, boolean limitConfigured) {
		this(bucket, source, limitConfigured, null);
	}

	BucketDefinition(Bucket bucket, BucketSource source, boolean limitConfigured, @Nullable LimitOverride override) {
		this.current = new Current(Objects.requireNonNull(bucket, "'bucket' must not be null"),
				Objects.requireNonNull(source, "'source' must not be null"), limitConfigured, override);
	}

	/**
	 * Takes the limits, source and override of {@code resolved}, the same bucket resolved
	 * again after a live change.
	 * @param resolved the bucket as it is now, with the live override that applies
	 */
	void update(BucketDefinition resolved) {
		Current now = resolved.current;
		this.current = new Current(now.bucket, now.source, now.limitConfigured, now.override);
	}

	/**
	 * Returns the bucket the acquirer enforces.
	 * @return the bucket
	 */
	public Bucket bucket() {
		return this.current.bucket;
	}

	/**
	 * Returns the bucket name.
	 * @return the name
	 */
	public String name() {
		return this.current.bucket.name();
	}

	/**
	 * Returns the limits, in the order the store checks them.
	 * @return the limits
	 */
	public List<LimitSpec> limits() {
		return this.current.bucket.limits();
	}

	/**
	 * Returns whether rejections are enforced.
	 * @return the mode
	 */
	public LimitMode mode() {
		return this.current.bucket.mode();
	}

	/**
	 * Returns where the limits come from.
	 * @return the source; {@link BucketSource#OVERRIDE} while a live override applies
	 */
	public BucketSource source() {
		return this.current.source;
	}

	/**
	 * Returns the live override that applies to the bucket: who set what, and when.
	 * @return the override, or {@code null} when the limits are the application's own
	 */
	public @Nullable LimitOverride override() {
		return this.current.override;
	}

	/**
	 * Returns whether configuration ({@code ratelimit.buckets.<name>.limit} or
	 * {@code .limits}) sets the permits, overriding any per-call limit of the code.
	 * @return whether the limit is configured
	 */
	public boolean limitConfigured() {
		return this.current.limitConfigured;
	}

	/**
	 * Returns the limits with the first limit's permits replaced by {@code limit}, for a
	 * per-call {@code limitExpression} (plans, tiers). The other settings stay.
	 * @param limit the permits per window for this call
	 * @return the limits to enforce
	 * @throws InvalidLimitSpecException when the limits with {@code limit} break a rule
	 * of {@link LimitSpec} (a limit that is not positive, too large for the algorithm)
	 */
	public List<LimitSpec> limitsWith(long limit) {
		// One read: limits and cache belong to the same version of the bucket.
		Current current = this.current;
		List<LimitSpec> limits = current.bucket.limits();
		if (limit == limits.get(0).limit()) {
			return limits;
		}
		List<LimitSpec> cached = current.byLimit.get(limit);
		if (cached != null) {
			return cached;
		}
		LimitSpec first = limits.get(0);
		LimitSpec.Builder builder = first.toBuilder().limit(limit);
		if (first.burst() == first.limit()) {
			builder.burst(limit);
		}
		List<LimitSpec> changed = new ArrayList<>(limits);
		changed.set(0, builder.build());
		List<LimitSpec> result = List.copyOf(changed);
		if (current.byLimit.size() < MAX_CACHED_LIMITS) {
			current.byLimit.put(limit, result);
		}
		return result;
	}

	/**
	 * Returns {@code limits} with their calendar windows in {@code zone}: a time zone per
	 * call (a customer's own). Limits without a calendar are kept as they are. The
	 * bucket's own limits in a zone are kept for the next call, as a bucket's limit per
	 * call is.
	 * @param limits the limits of the call (the bucket's, or those of
	 * {@link #limitsWith(long)})
	 * @param zone the zone
	 * @return the limits in that zone
	 * @throws io.github.ratelimit.InvalidLimitSpecException when a limit cannot be built
	 * in it
	 */
	public List<LimitSpec> limitsIn(List<LimitSpec> limits, ZoneId zone) {
		Current current = this.current;
		boolean own = limits == current.bucket.limits();
		if (own) {
			List<LimitSpec> cached = current.byZone.get(zone);
			if (cached != null) {
				return cached;
			}
		}
		List<LimitSpec> zoned = new ArrayList<>(limits.size());
		for (LimitSpec spec : limits) {
			zoned.add((spec.calendar() != null && !spec.zone().equals(zone)) ? spec.toBuilder().zone(zone).build()
					: spec);
		}
		List<LimitSpec> result = List.copyOf(zoned);
		if (own && current.byZone.size() < MAX_CACHED_LIMITS) {
			current.byZone.put(zone, result);
		}
		return result;
	}

	@Override
	public String toString() {
		return this.current.bucket.toString();
	}

	/**
	 * One version of the bucket, swapped as a whole by a live change, with the per-call
	 * limits derived from it.
	 */
	private record Current(Bucket bucket, BucketSource source, boolean limitConfigured,
			@Nullable LimitOverride override, Map<Long, List<LimitSpec>> byLimit, Map<ZoneId, List<LimitSpec>> byZone) {

		Current(Bucket bucket, BucketSource source, boolean limitConfigured, @Nullable LimitOverride override) {
			this(bucket, source, limitConfigured, override, new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
		}

	}

}
