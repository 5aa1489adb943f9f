package io.github.ratelimit.redis;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The contract suite against Redis as the auto-configuration builds it: behind a
 * {@link FailoverRateLimitStore} that answers repeated rejections locally, with the cache
 * and the script on the suite's clock. Every answer must be the script's.
 */
class RedisWithRejectionCacheContractTests extends RedisRateLimitStoreTests {

	@Override
	protected RateLimitStore createStore(ManualTimeSource time) {
		return FailoverRateLimitStore.builder(super.createStore(time), InMemoryRateLimitStore.builder().build())
			.failureMode(FailureMode.CLOSED)
			.rejectionCache(new RejectionCache(10_000, RejectionCache.DEFAULT_MAX_AGE, () -> time.nowMicros() * 1000))
			.build();
	}

}
