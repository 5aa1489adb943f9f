package io.github.ratelimit.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * Holds limiter state and makes decisions atomically. Every implementation meets the same
 * contract, checked by the shared contract suite: the semantics of each
 * {@link io.github.ratelimit.Algorithm}, all-or-nothing decisions over several limits,
 * honest retry-after times, and state that expires on its own once it no longer matters.
 * <p>
 * State is addressed by {@code (bucket, key)} and by the position of each limit in the
 * list: callers pass the same list, in the same order, for the same bucket.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface RateLimitStore extends AutoCloseable {

	/**
	 * A {@code maxDelayMicros} that accepts any leaky bucket delay.
	 */
	long NO_MAX_DELAY = Long.MAX_VALUE;

	/**
	 * Decides whether {@code cost} permits may be taken from every limit, and takes them
	 * from all of them if so. A rejected request takes nothing from any limit.
	 * @param bucket the bucket name
	 * @param key the key within the bucket (e.g. a user id); {@code ""} for one shared
	 * limit
	 * @param limits the limits, at least one
	 * @param cost the permits this request takes, at least 1
	 * @param maxDelayMicros the longest leaky bucket delay the caller accepts; a request
	 * that would wait longer is rejected and takes nothing
	 * @return the decision
	 * @throws IllegalArgumentException for a null bucket, key or limit, no limits or a
	 * cost below 1
	 * @throws RateLimitStoreException when the store cannot answer (unreachable, timed
	 * out)
	 */
	Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros);

	/**
	 * Decides with no bound on the leaky bucket delay.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits, at least one
	 * @param cost the permits this request takes, at least 1
	 * @return the decision
	 * @see #decide(String, String, List, long, long)
	 */
	default Decision decide(String bucket, String key, List<LimitSpec> limits, long cost) {
		return decide(bucket, key, limits, cost, NO_MAX_DELAY);
	}

	/**
	 * Decides without blocking the calling thread. The default completes synchronously;
	 * network stores override it.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits, at least one
	 * @param cost the permits this request takes, at least 1
	 * @param maxDelayMicros the longest leaky bucket delay the caller accepts
	 * @return the decision, or a stage completed exceptionally with a
	 * {@link RateLimitStoreException}
	 */
	default CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		try {
			return CompletableFuture.completedFuture(decide(bucket, key, limits, cost, maxDelayMicros));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives {@code cost} permits back to every limit that supports refunds (all but leaky
	 * bucket), e.g. after a call that should not count. A refund never raises the permits
	 * available above the limit.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the same limits as the decision being refunded
	 * @param cost the permits to give back, at least 1
	 * @throws RateLimitStoreException when the store cannot answer
	 */
	void refund(String bucket, String key, List<LimitSpec> limits, long cost);

	/**
	 * Gives back the permits of a decision this store made, to where that decision took
	 * them ({@link Decision#origin()}). A store that puts a fallback in front of another
	 * store overrides this, so that a permit taken by the fallback is not given to the
	 * store it stood in for; the default gives the permits back here.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the same limits as the decision being refunded
	 * @param cost the permits to give back, at least 1
	 * @param admitted the allowing decision this store returned for the call
	 * @throws RateLimitStoreException when the store cannot answer
	 */
	default void refund(String bucket, String key, List<LimitSpec> limits, long cost, Decision admitted) {
		refund(bucket, key, limits, cost);
	}

	/**
	 * Takes permits whether or not a request of that cost would be allowed:
	 * {@code costs[i]} from limit {@code i}, each limit on its own. For permits that were
	 * spent without this store knowing, e.g. those a per-instance fallback admitted while
	 * this store could not be reached. A window algorithm counts them all, going into
	 * debt (remaining stays zero until what is owed has left the window) up to one limit
	 * beyond it; a bucket algorithm takes what it has, as a bucket owes no more than its
	 * capacity.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits
	 * @param costs the permits to take from each limit, in the order of {@code limits},
	 * each zero or more
	 * @throws IllegalArgumentException for a null bucket, key or limit, no limits, or
	 * costs that do not match the limits
	 * @throws RateLimitStoreException when the store cannot answer
	 * @throws UnsupportedOperationException when the store cannot take permits this way
	 * (the default; both stores of this library can)
	 */
	default void charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		throw new UnsupportedOperationException("Rate limit store '" + name() + "' cannot charge permits");
	}

	/**
	 * Takes {@code permits} from every limit, each on its own, even past the limit: the
	 * permits a call used beyond what it reserved, when it settles. What a limit has left
	 * is taken, and the rest is owed: the key is rejected, with a retry-after at the time
	 * the debt is paid, until the limit is full again and the permits owed have come back
	 * at its rate ({@code window / limit} each). A key in debt owes more with each such
	 * call; a refund pays its debt off at the same rate.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits
	 * @param permits the permits to take, at least 1
	 * @return the permits owed past what a limit had left (the most of any limit): 0 when
	 * every limit had them all
	 * @throws IllegalArgumentException for a null bucket, key or limit, no limits or
	 * fewer than 1 permit
	 * @throws RateLimitStoreException when the store cannot answer
	 * @throws UnsupportedOperationException when the store cannot take permits this way
	 * (the default; both stores of this library can)
	 */
	default long owe(String bucket, String key, List<LimitSpec> limits, long permits) {
		throw new UnsupportedOperationException("Rate limit store '" + name() + "' cannot settle beyond a reservation");
	}

	/**
	 * Takes permits as {@link #charge} does, but only when none of the limits has any
	 * state for the key (all full: never used, expired, reset, or lost), in one atomic
	 * step. For usage this instance knows of and the store may have lost, e.g. after the
	 * store restarted empty: a store that kept the state keeps it unchanged.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits
	 * @param costs the permits to take from each limit, each zero or more
	 * @return whether the permits were taken (the key had no state)
	 * @throws IllegalArgumentException as {@link #charge} does
	 * @throws RateLimitStoreException when the store cannot answer
	 * @throws UnsupportedOperationException when the store cannot take permits this way
	 * (the default; both stores of this library can)
	 */
	default boolean restore(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		throw new UnsupportedOperationException("Rate limit store '" + name() + "' cannot restore permits");
	}

	/**
	 * Reports the current state without consuming: {@code allowed} says whether a request
	 * of cost 1 would be allowed now, {@code remaining} how many permits are left.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits
	 * @return the state as a decision
	 * @throws RateLimitStoreException when the store cannot answer
	 */
	Decision peek(String bucket, String key, List<LimitSpec> limits);

	/**
	 * Forgets the state of one key, so its limits are full again.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits whose state to forget
	 * @throws RateLimitStoreException when the store cannot answer
	 */
	void reset(String bucket, String key, List<LimitSpec> limits);

	/**
	 * Returns a short name for metrics and the actuator endpoint, e.g. {@code memory}.
	 * @return the store name
	 */
	String name();

	/**
	 * Releases resources; the default does nothing.
	 */
	@Override
	default void close() {
	}

}
