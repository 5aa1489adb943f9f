package io.github.ratelimit.redis;

import java.time.Duration;

import io.github.ratelimit.ManualTimeSource;

/**
 * Redis stores as the contract suite needs them, whichever client they run on.
 */
final class ContractSuiteStores {

	private ContractSuiteStores() {
	}

	/**
	 * Builds a store on the suite's clock. The suite's clock jumps ahead of real time:
	 * keys must outlive their real-time TTL. The timeout is generous: the suite checks
	 * semantics, not latency, on a shared machine.
	 * @param builder the store's builder, on the client under test
	 * @param time the suite's clock
	 * @return the store
	 */
	static RedisRateLimitStore onSuiteClock(RedisRateLimitStore.Builder builder, ManualTimeSource time) {
		return builder.timeSource(time).expirySlack(Duration.ofMinutes(10)).timeout(Duration.ofSeconds(5)).build();
	}

}
