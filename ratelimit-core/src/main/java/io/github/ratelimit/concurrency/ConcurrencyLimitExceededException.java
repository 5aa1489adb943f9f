package io.github.ratelimit.concurrency;

import io.github.ratelimit.Durations;
import io.github.ratelimit.RateLimitExceededException;

/**
 * A call was rejected because its key had all the permits of a {@link ConcurrencyLimit}
 * in flight. A {@link RateLimitExceededException}, so the web layer answers 429 alike;
 * its decision has no window, and a {@code retryAfter} that is an estimate (the time
 * until the earliest lease of the key would end unless renewed).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class ConcurrencyLimitExceededException extends RateLimitExceededException {

	private static final long serialVersionUID = 1L;

	private final transient ConcurrencyDecision concurrency;

	private final String policy;

	/**
	 * Creates an exception for a rejected request.
	 * @param bucket the bucket
	 * @param decision the store's decision
	 */
	public ConcurrencyLimitExceededException(String bucket, ConcurrencyDecision decision) {
		this(bucket, decision, false);
	}

	/**
	 * Creates an exception for a rejected request.
	 * @param bucket the bucket
	 * @param decision the store's decision
	 * @param alsoRateLimited whether the bucket's rate limit applies to the request too,
	 * so that its policy is named apart ({@link #policyName})
	 */
	public ConcurrencyLimitExceededException(String bucket, ConcurrencyDecision decision, boolean alsoRateLimited) {
		super("Concurrency limit reached for bucket '" + bucket + "' (" + decision.permits()
				+ " in flight): retry after about " + Durations.readableMicros(decision.retryAfterMicros()), bucket,
				decision.asDecision());
		this.concurrency = decision;
		this.policy = policyName(bucket, alsoRateLimited);
	}

	/**
	 * Returns the name of a concurrency limit's quota policy: the bucket's, or
	 * {@code <bucket>-concurrency} when the bucket's rate limit applies to the request
	 * too, so that a client can tell the two policies apart.
	 * @param bucket the bucket
	 * @param alsoRateLimited whether the bucket's rate limit applies to the request too
	 * @return the policy name
	 */
	public static String policyName(String bucket, boolean alsoRateLimited) {
		return alsoRateLimited ? bucket + "-concurrency" : bucket;
	}

	@Override
	public String getPolicy() {
		return this.policy;
	}

	/**
	 * Returns the store's decision.
	 * @return the decision
	 */
	public ConcurrencyDecision getConcurrencyDecision() {
		return this.concurrency;
	}

}
