package io.github.ratelimit.redis;

import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The contract suite with every decision sent through the script's batch operation, as a
 * batch of one: a batch must decide as a single call does.
 * ({@link RedisRateLimitStoreTests} runs the suite on the store as built, which coalesces
 * concurrent decisions.)
 */
class RedisBatchContractTests extends RedisRateLimitStoreTests {

	@Override
	protected RateLimitStore createStore(ManualTimeSource time) {
		return new BatchOfOne((RedisRateLimitStore) super.createStore(time));
	}

	/**
	 * Sends each decision as a batch of its own.
	 */
	private record BatchOfOne(RedisRateLimitStore store) implements RateLimitStore {

		@Override
		public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
			return this.store.decideBatch(bucket, key, limits, new long[] { cost }, new long[] { maxDelayMicros })
				.get(0);
		}

		@Override
		public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
			this.store.refund(bucket, key, limits, cost);
		}

		@Override
		public Decision peek(String bucket, String key, List<LimitSpec> limits) {
			return this.store.peek(bucket, key, limits);
		}

		@Override
		public long owe(String bucket, String key, List<LimitSpec> limits, long permits) {
			return this.store.owe(bucket, key, limits, permits);
		}

		@Override
		public void charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
			this.store.charge(bucket, key, limits, costs);
		}

		@Override
		public boolean restore(String bucket, String key, List<LimitSpec> limits, long[] costs) {
			return this.store.restore(bucket, key, limits, costs);
		}

		@Override
		public void reset(String bucket, String key, List<LimitSpec> limits) {
			this.store.reset(bucket, key, limits);
		}

		@Override
		public String name() {
			return this.store.name();
		}

		@Override
		public void close() {
			this.store.close();
		}

	}

}
