package io.github.ratelimit.concurrency;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * The concurrency contract suite against {@link InMemoryRateLimitStore}, which keeps the
 * permits of concurrency limits beside the rate limits' state and decides both in one
 * step.
 */
class InMemoryRateAndConcurrencyStoreTests extends RateAndConcurrencyStoreContractTests {

	@Override
	protected ConcurrencyStore createStore(ManualTimeSource time) {
		return InMemoryRateLimitStore.builder().timeSource(time).build();
	}

}
