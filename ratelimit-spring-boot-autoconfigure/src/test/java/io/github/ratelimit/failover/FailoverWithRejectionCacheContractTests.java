package io.github.ratelimit.failover;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreContractTests;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The contract suite through a {@link FailoverRateLimitStore} that answers repeated
 * rejections from a {@link RejectionCache} on the suite's clock: the cache must not
 * change a single decision the store would make.
 */
class FailoverWithRejectionCacheContractTests extends RateLimitStoreContractTests {

	@Override
	protected RateLimitStore createStore(ManualTimeSource time) {
		InMemoryRateLimitStore primary = InMemoryRateLimitStore.builder()
			.timeSource(time)
			.executor(Runnable::run)
			.build();
		return FailoverRateLimitStore.builder(primary, InMemoryRateLimitStore.builder().build())
			.failureMode(FailureMode.CLOSED)
			.rejectionCache(new RejectionCache(10_000, RejectionCache.DEFAULT_MAX_AGE, () -> time.nowMicros() * 1000))
			.build();
	}

}
