package io.github.ratelimit.spring;

import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * One decision for one bucket and key, with what became of the request.
 *
 * @param bucket the bucket
 * @param key the key within the bucket
 * @param limits the limits enforced for this call (the bucket's, or per-call ones)
 * @param decision the store's decision
 * @param outcome what became of the request
 * @param storeNanos how long the store took to decide, or {@code -1} when unknown
 * @author ratelimit-spring-boot-starter authors
 */
public record RateLimitResult(BucketDefinition bucket, String key, List<LimitSpec> limits, Decision decision,
		Outcome outcome, long storeNanos) {

	/**
	 * Creates a result whose store time is unknown.
	 * @param bucket the bucket
	 * @param key the key within the bucket
	 * @param limits the limits enforced for this call
	 * @param decision the store's decision
	 * @param outcome what became of the request
	 */
	public RateLimitResult(BucketDefinition bucket, String key, List<LimitSpec> limits, Decision decision,
			Outcome outcome) {
		this(bucket, key, limits, decision, outcome, -1);
	}

	/**
	 * Returns whether the request may proceed (allowed, or rejected in shadow mode).
	 * @return {@code true} when it may proceed
	 */
	public boolean proceeds() {
		return this.outcome.proceeds();
	}

}
