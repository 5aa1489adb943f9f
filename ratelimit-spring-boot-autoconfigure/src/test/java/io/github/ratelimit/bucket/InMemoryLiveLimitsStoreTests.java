package io.github.ratelimit.bucket;

/**
 * {@link InMemoryLiveLimitsStore} meets the live limits store contract.
 */
class InMemoryLiveLimitsStoreTests extends LiveLimitsStoreContractTests {

	@Override
	protected LiveLimitsStore createStore() {
		return new InMemoryLiveLimitsStore();
	}

}
