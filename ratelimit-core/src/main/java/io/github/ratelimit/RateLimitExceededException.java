package io.github.ratelimit;

/**
 * A request was rejected by a rate limit. Carries the {@link Decision}, whose
 * {@code retryAfter} tells when the same request would be allowed.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitExceededException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String bucket;

	private final transient Decision decision;

	/**
	 * Creates an exception for a rejected decision.
	 * @param bucket the bucket whose limit was reached
	 * @param decision the rejecting decision
	 */
	public RateLimitExceededException(String bucket, Decision decision) {
		super(message(bucket, decision));
		this.bucket = bucket;
		this.decision = decision;
	}

	/**
	 * Creates an exception with a message of its own, for another kind of limit.
	 * @param message the message
	 * @param bucket the bucket whose limit was reached
	 * @param decision the rejecting decision
	 */
	protected RateLimitExceededException(String message, String bucket, Decision decision) {
		super(message);
		this.bucket = bucket;
		this.decision = decision;
	}

	/**
	 * Returns the bucket whose limit was reached.
	 * @return the bucket name
	 */
	public String getBucket() {
		return this.bucket;
	}

	/**
	 * Returns the rejecting decision.
	 * @return the decision
	 */
	public Decision getDecision() {
		return this.decision;
	}

	/**
	 * Returns the name of the refusing limit's quota policy, as the limit headers and the
	 * problem body of a 429 give it: the bucket's name.
	 * @return the policy name
	 */
	public String getPolicy() {
		return this.bucket;
	}

	private static String message(String bucket, Decision decision) {
		String base = "Rate limit exceeded for bucket '" + bucket + "' (" + decision.limit() + " per "
				+ ((decision.spec() != null) ? Durations.format(decision.spec().window()) : "window") + ")";
		if (!decision.retryable()) {
			return base + ": the request costs more than the limit allows, waiting will not help";
		}
		return base + ": retry after " + Durations.readable(decision.retryAfter());
	}

}
