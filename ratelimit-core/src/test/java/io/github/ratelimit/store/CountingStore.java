package io.github.ratelimit.store;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.HeldDecision;
import io.github.ratelimit.concurrency.Holders;
import io.github.ratelimit.concurrency.RateAndConcurrencyStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The memory store, counting the calls that reach it; it can fail every one-step call, or
 * answer some too late (after running them).
 */
public final class CountingStore extends ForwardingRateLimitStore implements ConcurrencyStore, RateAndConcurrencyStore {

	private final InMemoryRateLimitStore delegate;

	private final AtomicInteger decideHolding = new AtomicInteger();

	private final AtomicInteger decide = new AtomicInteger();

	private final AtomicInteger acquire = new AtomicInteger();

	private final AtomicInteger lateAnswers = new AtomicInteger();

	private volatile boolean failing;

	/**
	 * Fails every call that takes, or decides with, a permit from now on.
	 */
	public void fail() {
		this.failing = true;
	}

	/**
	 * Answers the next one-step calls too late, after running them.
	 * @param calls how many
	 */
	public void answerTooLate(int calls) {
		this.lateAnswers.set(calls);
	}

	/**
	 * Wraps a memory store.
	 * @param delegate the store that answers
	 */
	public CountingStore(InMemoryRateLimitStore delegate) {
		super(delegate);
		this.delegate = delegate;
	}

	/**
	 * Returns the calls so far.
	 * @return e.g. {@code decideHolding=1 decide=0 acquire=0}
	 */
	public String calls() {
		return "decideHolding=" + this.decideHolding + " decide=" + this.decide + " acquire=" + this.acquire;
	}

	@Override
	public @Nullable HeldDecision decideHolding(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, ConcurrencyStore permits, ConcurrencyLimit limit, String holder, boolean enforced) {
		this.decideHolding.incrementAndGet();
		if (this.failing) {
			throw new RateLimitStoreException("down", null, false, false);
		}
		HeldDecision decided = this.delegate.decideHolding(bucket, key, limits, cost, maxDelayMicros,
				(permits == this) ? this.delegate : permits, limit, holder, enforced);
		if (this.lateAnswers.getAndUpdate((late) -> Math.max(0, late - 1)) > 0) {
			throw new RateLimitStoreException("answered too late", null, true, true);
		}
		return decided;
	}

	@Override
	public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		this.decide.incrementAndGet();
		return super.decide(bucket, key, limits, cost, maxDelayMicros);
	}

	@Override
	public ConcurrencyDecision acquire(String bucket, String key, ConcurrencyLimit limit, String holder) {
		this.acquire.incrementAndGet();
		if (this.failing) {
			throw new RateLimitStoreException("down", null, false, false);
		}
		return this.delegate.acquire(bucket, key, limit, holder);
	}

	@Override
	public boolean renew(String bucket, String key, ConcurrencyLimit limit, String holder) {
		return this.delegate.renew(bucket, key, limit, holder);
	}

	@Override
	public boolean release(String bucket, String key, String holder) {
		if (this.failing) {
			throw new RateLimitStoreException("down", null, false, false);
		}
		return this.delegate.release(bucket, key, holder);
	}

	@Override
	public Holders holders(String bucket, String key) {
		return this.delegate.holders(bucket, key);
	}

	@Override
	public int releaseAll(String bucket, String key) {
		return this.delegate.releaseAll(bucket, key);
	}

}
