package io.github.ratelimit.store;

import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * A store that passes every call on, for tests that change or note some of them.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public abstract class ForwardingRateLimitStore implements RateLimitStore {

	private final RateLimitStore delegate;

	/**
	 * Creates a store that passes every call on to {@code delegate}.
	 * @param delegate the store that answers
	 */
	protected ForwardingRateLimitStore(RateLimitStore delegate) {
		this.delegate = delegate;
	}

	@Override
	public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		return this.delegate.decide(bucket, key, limits, cost, maxDelayMicros);
	}

	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		this.delegate.refund(bucket, key, limits, cost);
	}

	@Override
	public Decision peek(String bucket, String key, List<LimitSpec> limits) {
		return this.delegate.peek(bucket, key, limits);
	}

	@Override
	public void reset(String bucket, String key, List<LimitSpec> limits) {
		this.delegate.reset(bucket, key, limits);
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

}
