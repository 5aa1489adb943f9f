package io.github.ratelimit.concurrency;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.LimitSpec;

/**
 * A store that decides a request's rate limits and takes a permit of its concurrency
 * limit, of the same bucket and key, in one atomic step (on Redis, one script call rather
 * than two). Both stores of this library are one.
 * <p>
 * The step does what a permit taken first and a decision made after it would, with
 * nothing in between: no permit free, and the rate limits are not asked (they take
 * nothing); a permit free, and the rate limits decide; the permit is taken when they
 * allow, or whatever they decide when {@code enforced} is {@code false} (shadow mode,
 * where a rejected call runs). A holder that holds a permit already asks again after an
 * answer that came too late: the first ask ran and decided, so this one takes nothing
 * more and answers allowed, with what the rate limits have left.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface RateAndConcurrencyStore {

	/**
	 * Decides a request and takes a concurrency permit for it, in one step.
	 * @param bucket the bucket name, of both limits
	 * @param key the key within the bucket
	 * @param limits the rate limits, at least one
	 * @param cost the permits the request takes from the rate limits, at least 1
	 * @param maxDelayMicros the longest leaky bucket delay the caller accepts
	 * @param permits the store the concurrency limiter keeps its permits in: a store
	 * answers {@code null} unless it keeps them itself
	 * @param limit the concurrency limit
	 * @param holder who takes the permit
	 * @param enforced whether a rejection by the rate limits keeps the permit from being
	 * taken
	 * @return what was decided, or {@code null} when this store cannot decide both in one
	 * step now (it keeps the permits elsewhere, or it answers from its failure mode): the
	 * caller asks each on its own
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer
	 */
	@Nullable HeldDecision decideHolding(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros,
			ConcurrencyStore permits, ConcurrencyLimit limit, String holder, boolean enforced);

}
