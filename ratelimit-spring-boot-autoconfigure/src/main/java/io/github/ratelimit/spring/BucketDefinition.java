package io.github.ratelimit.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.LimitSpec;

/**
 * A named bucket with its resolved limits: what the store is asked to enforce.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class BucketDefinition {

	/**
	 * Per-call limits from a {@code limitExpression} are cached up to this many values.
	 */
	private static final int MAX_CACHED_LIMITS = 1024;

	private final String name;

	private final List<LimitSpec> limits;

	private final LimitMode mode;

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
		this(name, limits, mode, source, false);
	}

	/**
	 * Creates a definition.
	 * @param name the bucket name
	 * @param limits the limits, at least one
	 * @param mode enforce or shadow
	 * @param source where the limits come from
	 * @param limitConfigured whether configuration sets the limit itself, which then wins
	 * over a per-call {@code limitExpression}
	 */
	public BucketDefinition(String name, List<LimitSpec> limits, LimitMode mode, BucketSource source,
			boolean limitConfigured) {
		if (limits.isEmpty()) {
			throw new IllegalArgumentException("bucket '" + name + "' needs at least one limit");
		}
		this.name = Objects.requireNonNull(name, "'name' must not be null");
		this.limits = List.copyOf(limits);
		this.mode = Objects.requireNonNull(mode, "'mode' must not be null");
		this.source = Objects.requireNonNull(source, "'source' must not be null");
		this.limitConfigured = limitConfigured;
	}

	/**
	 * Returns the bucket name.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns the limits, in the order the store checks them.
	 * @return the limits
	 */
	public List<LimitSpec> limits() {
		return this.limits;
	}

	/**
	 * Returns whether rejections are enforced.
	 * @return the mode
	 */
	public LimitMode mode() {
		return this.mode;
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
		if (limit == this.limits.get(0).limit()) {
			return this.limits;
		}
		List<LimitSpec> cached = this.byLimit.get(limit);
		if (cached != null) {
			return cached;
		}
		LimitSpec first = this.limits.get(0);
		LimitSpec.Builder builder = first.toBuilder().limit(limit);
		if (first.burst() == first.limit()) {
			builder.burst(limit);
		}
		List<LimitSpec> limits = new ArrayList<>(this.limits);
		limits.set(0, builder.build());
		List<LimitSpec> result = List.copyOf(limits);
		if (this.byLimit.size() < MAX_CACHED_LIMITS) {
			this.byLimit.put(limit, result);
		}
		return result;
	}

	@Override
	public String toString() {
		return this.name + " " + this.limits + ((this.mode == LimitMode.SHADOW) ? " (shadow)" : "");
	}

}
