package io.github.ratelimit.bucket;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;

/**
 * A bucket as the application defines it: the {@link Bucket} the acquirer enforces (name,
 * limits, mode), where its limits come from, and the per-call variants of its limits that
 * a {@code limitExpression} asks for.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class BucketDefinition {

	/**
	 * Per-call limits from a {@code limitExpression} are cached up to this many values.
	 */
	private static final int MAX_CACHED_LIMITS = 1024;

	private final Bucket bucket;

	private final BucketSource source;

	private final boolean limitConfigured;

	private final Map<Long, List<LimitSpec>> byLimit = new ConcurrentHashMap<>();

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
		this.bucket = Objects.requireNonNull(bucket, "'bucket' must not be null");
		this.source = Objects.requireNonNull(source, "'source' must not be null");
		this.limitConfigured = limitConfigured;
	}

	/**
	 * Returns the bucket the acquirer enforces.
	 * @return the bucket
	 */
	public Bucket bucket() {
		return this.bucket;
	}

	/**
	 * Returns the bucket name.
	 * @return the name
	 */
	public String name() {
		return this.bucket.name();
	}

	/**
	 * Returns the limits, in the order the store checks them.
	 * @return the limits
	 */
	public List<LimitSpec> limits() {
		return this.bucket.limits();
	}

	/**
	 * Returns whether rejections are enforced.
	 * @return the mode
	 */
	public LimitMode mode() {
		return this.bucket.mode();
	}

	/**
	 * Returns where the limits come from.
	 * @return the source
	 */
	public BucketSource source() {
		return this.source;
	}

	/**
	 * Returns whether configuration ({@code ratelimit.buckets.<name>.limit} or
	 * {@code .limits}) sets the permits, overriding any per-call limit of the code.
	 * @return whether the limit is configured
	 */
	public boolean limitConfigured() {
		return this.limitConfigured;
	}

	/**
	 * Returns the limits with the first limit's permits replaced by {@code limit}, for a
	 * per-call {@code limitExpression} (plans, tiers). The other settings stay.
	 * @param limit the permits per window for this call
	 * @return the limits to enforce
	 * @throws IllegalArgumentException when {@code limit} is not positive
	 */
	public List<LimitSpec> limitsWith(long limit) {
		List<LimitSpec> limits = limits();
		if (limit == limits.get(0).limit()) {
			return limits;
		}
		List<LimitSpec> cached = this.byLimit.get(limit);
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
		if (this.byLimit.size() < MAX_CACHED_LIMITS) {
			this.byLimit.put(limit, result);
		}
		return result;
	}

	@Override
	public String toString() {
		return this.bucket.toString();
	}

}
