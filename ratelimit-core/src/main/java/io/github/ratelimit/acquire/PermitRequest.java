package io.github.ratelimit.acquire;

import java.util.List;
import java.util.Objects;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;

/**
 * What one call asks of one bucket: permits for a key, under the bucket's limits (or
 * per-call ones), and how long it may wait for them.
 *
 * @param bucket the bucket
 * @param key the key within the bucket, e.g. a user id; {@code ""} for one limit shared
 * by every caller
 * @param limits the limits to enforce: the bucket's, or per-call ones (a
 * {@code limitExpression}); the same list, in the same order, for the same bucket and key
 * @param cost the permits the call takes, at least 1
 * @param waitPolicy how long the call may wait, and for what
 * @author ratelimit-spring-boot-starter authors
 */
public record PermitRequest(Bucket bucket, String key, List<LimitSpec> limits, long cost, WaitPolicy waitPolicy) {

	/**
	 * Checks the request.
	 * @throws IllegalArgumentException for a cost below 1 or no limits
	 */
	public PermitRequest {
		Objects.requireNonNull(bucket, "'bucket' must not be null");
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(waitPolicy, "'waitPolicy' must not be null");
		// A bucket's own limits are already an immutable, non-empty copy: most requests
		// use them, and copying again showed up in profiles of a decision.
		if (limits != bucket.limits()) {
			limits = List.copyOf(limits);
		}
		if (limits.isEmpty()) {
			throw new IllegalArgumentException("bucket '" + bucket.name() + "' needs at least one limit");
		}
		if (cost < 1) {
			throw new IllegalArgumentException("cost must be at least 1 but was " + cost);
		}
	}

	/**
	 * Returns a request for permits under the bucket's own limits that does not wait for
	 * a permit.
	 * @param bucket the bucket
	 * @param key the key within the bucket
	 * @param cost the permits, at least 1
	 * @return the request
	 */
	public static PermitRequest of(Bucket bucket, String key, long cost) {
		return new PermitRequest(bucket, key, bucket.limits(), cost, WaitPolicy.REJECT);
	}

	/**
	 * Returns whether giving these permits back can change anything: some limit is not a
	 * leaky bucket, whose slots are never given back.
	 * @return {@code false} when every limit is a leaky bucket
	 */
	boolean refundable() {
		for (LimitSpec limit : this.limits) {
			if (limit.algorithm() != Algorithm.LEAKY_BUCKET) {
				return true;
			}
		}
		return false;
	}

}
