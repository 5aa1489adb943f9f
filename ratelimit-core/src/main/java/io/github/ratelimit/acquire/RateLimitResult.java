package io.github.ratelimit.acquire;

import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * The final answer to one {@link PermitRequest}: the store's decision (after any wait for
 * a permit) and what became of the request. A result whose decision is allowed holds
 * permits, and keeps the decision that admitted them, so that a refund can reach the
 * store that took them.
 *
 * @param request what was asked
 * @param decision the store's last decision for it
 * @param outcome what became of the request
 * @param storeNanos how long the store took to make {@code decision}, or {@code -1} when
 * not measured (an acquirer without observers does not time the store)
 * @author ratelimit-spring-boot-starter authors
 */
public record RateLimitResult(PermitRequest request, Decision decision, Outcome outcome, long storeNanos) {

	/**
	 * Returns the bucket.
	 * @return the bucket
	 */
	public Bucket bucket() {
		return this.request.bucket();
	}

	/**
	 * Returns the key within the bucket.
	 * @return the key
	 */
	public String key() {
		return this.request.key();
	}

	/**
	 * Returns the limits the request was decided on (the bucket's, or per-call ones).
	 * @return the limits
	 */
	public List<LimitSpec> limits() {
		return this.request.limits();
	}

	/**
	 * Returns whether the request may proceed (allowed, allowed after waiting, or
	 * rejected in shadow mode).
	 * @return {@code true} when it may proceed
	 */
	public boolean proceeds() {
		return this.outcome.proceeds();
	}

	/**
	 * Returns whether the request holds permits that a refund can give back: its decision
	 * allowed it (a shadow rejection took nothing) and not every limit is a leaky bucket.
	 * @return {@code true} when a refund would change something
	 */
	public boolean refundable() {
		return this.decision.allowed() && this.request.refundable();
	}

}
