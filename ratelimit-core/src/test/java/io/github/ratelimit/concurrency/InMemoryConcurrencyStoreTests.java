package io.github.ratelimit.concurrency;

import io.github.ratelimit.ManualTimeSource;

/**
 * The concurrency contract suite against {@link InMemoryConcurrencyStore}.
 */
class InMemoryConcurrencyStoreTests extends ConcurrencyStoreContractTests {

	@Override
	protected ConcurrencyStore createStore(ManualTimeSource time) {
		return new InMemoryConcurrencyStore(time);
	}

}
