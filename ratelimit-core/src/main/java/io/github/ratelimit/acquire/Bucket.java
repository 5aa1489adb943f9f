package io.github.ratelimit.acquire;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.LimitSpec;

/**
 * A named set of limits, all enforced together, and whether its rejections are enforced:
 * the unit of configuration, metrics and the endpoint. Immutable.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class Bucket {

	private final String name;

	private final List<LimitSpec> limits;

	private final LimitMode mode;

	/**
	 * Creates a bucket.
	 * @param name the name, not empty
	 * @param limits the limits, at least one, in the order the store checks them
	 * @param mode enforce or shadow
	 * @throws IllegalArgumentException for an empty name or no limits
	 */
	public Bucket(String name, List<LimitSpec> limits, LimitMode mode) {
		if (name == null || name.isEmpty()) {
			throw new IllegalArgumentException("bucket must not be null or empty");
		}
		if (limits.isEmpty()) {
			throw new IllegalArgumentException("bucket '" + name + "' needs at least one limit");
		}
		this.name = name;
		this.limits = List.copyOf(limits);
		this.mode = Objects.requireNonNull(mode, "'mode' must not be null");
	}

	/**
	 * Creates an enforced bucket.
	 * @param name the name, not empty
	 * @param limits the limits, at least one
	 * @return the bucket
	 */
	public static Bucket of(String name, LimitSpec... limits) {
		return new Bucket(name, List.of(limits), LimitMode.ENFORCE);
	}

	/**
	 * Returns the name.
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

	@Override
	public boolean equals(@Nullable Object other) {
		return this == other || (other instanceof Bucket bucket && this.name.equals(bucket.name)
				&& this.limits.equals(bucket.limits) && this.mode == bucket.mode);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.name, this.limits, this.mode);
	}

	@Override
	public String toString() {
		return this.name + " " + this.limits + ((this.mode == LimitMode.SHADOW) ? " (shadow)" : "");
	}

}
