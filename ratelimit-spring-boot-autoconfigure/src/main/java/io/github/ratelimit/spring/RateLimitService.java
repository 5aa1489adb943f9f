package io.github.ratelimit.spring;

import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Makes decisions for buckets on the configured store, applies shadow mode, and tells the
 * {@link RateLimitObserver observers}. The aspect and the filter both go through here, so
 * they count, report and enforce alike.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitService {

	private static final Log logger = LogFactory.getLog(RateLimitService.class);

	private final RateLimitStore store;

	private final RateLimitObserver[] observers;

	/**
	 * Creates a service.
	 * @param store the store
	 * @param observers told of every decision
	 */
	public RateLimitService(RateLimitStore store, List<RateLimitObserver> observers) {
		this.store = store;
		this.observers = observers.toArray(new RateLimitObserver[0]);
	}

	/**
	 * Returns the store decisions are made on.
	 * @return the store
	 */
	public RateLimitStore store() {
		return this.store;
	}

	/**
	 * Decides for one call.
	 * @param bucket the bucket
	 * @param key the key within the bucket
	 * @param limits the limits for this call ({@link BucketDefinition#limits()} or
	 * per-call ones)
	 * @param cost the permits the call takes
	 * @param maxDelayMicros the longest leaky bucket delay accepted
	 * @return the result
	 */
	public RateLimitResult decide(BucketDefinition bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		long started = System.nanoTime();
		Decision decision;
		try {
			decision = this.store.decide(bucket.name(), key, limits, cost, maxDelayMicros);
		}
		catch (RuntimeException ex) {
			failed(bucket, ex, System.nanoTime() - started);
			throw ex;
		}
		return observe(bucket, key, limits, decision, System.nanoTime() - started);
	}

	/**
	 * Decides for one call without blocking the calling thread.
	 * @param bucket the bucket
	 * @param key the key within the bucket
	 * @param limits the limits for this call
	 * @param cost the permits the call takes
	 * @param maxDelayMicros the longest leaky bucket delay accepted
	 * @return the result
	 */
	public CompletionStage<RateLimitResult> decideAsync(BucketDefinition bucket, String key, List<LimitSpec> limits,
			long cost, long maxDelayMicros) {
		long started = System.nanoTime();
		return this.store.decideAsync(bucket.name(), key, limits, cost, maxDelayMicros).handle((decision, ex) -> {
			if (ex != null) {
				Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
				RuntimeException failure = (cause instanceof RuntimeException runtime) ? runtime
						: new CompletionException(cause);
				failed(bucket, failure, System.nanoTime() - started);
				throw failure;
			}
			return observe(bucket, key, limits, decision, System.nanoTime() - started);
		});
	}

	/**
	 * Gives permits back after a call that should not count.
	 * @param bucket the bucket
	 * @param key the key within the bucket
	 * @param limits the limits the call was decided on
	 * @param cost the permits to give back
	 */
	public void refund(BucketDefinition bucket, String key, List<LimitSpec> limits, long cost) {
		this.store.refund(bucket.name(), key, limits, cost);
	}

	private void failed(BucketDefinition bucket, RuntimeException failure, long nanos) {
		for (RateLimitObserver observer : this.observers) {
			try {
				observer.onError(bucket, failure, nanos);
			}
			catch (RuntimeException ex) {
				logger.warn("Rate limit observer " + observer.getClass().getName() + " failed", ex);
			}
		}
	}

	private RateLimitResult observe(BucketDefinition bucket, String key, List<LimitSpec> limits, Decision decision,
			long nanos) {
		Outcome outcome;
		if (decision.allowed()) {
			outcome = Outcome.ALLOWED;
		}
		else {
			outcome = (bucket.mode() == LimitMode.SHADOW) ? Outcome.SHADOW_REJECTED : Outcome.REJECTED;
		}
		RateLimitResult result = new RateLimitResult(bucket, key, limits, decision, outcome, nanos);
		for (RateLimitObserver observer : this.observers) {
			try {
				observer.onDecision(result);
			}
			catch (RuntimeException ex) {
				logger.warn("Rate limit observer " + observer.getClass().getName() + " failed", ex);
			}
		}
		return result;
	}

}
