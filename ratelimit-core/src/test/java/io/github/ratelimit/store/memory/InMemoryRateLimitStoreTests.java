package io.github.ratelimit.store.memory;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreContractTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract suite against {@link InMemoryRateLimitStore}, plus its bounds on memory.
 */
class InMemoryRateLimitStoreTests extends RateLimitStoreContractTests {

	@Override
	protected RateLimitStore createStore(ManualTimeSource time) {
		return InMemoryRateLimitStore.builder().timeSource(time).executor(Runnable::run).build();
	}

	@Test
	void idleKeysExpireOnceTheirStateIsFreshAgain() {
		InMemoryRateLimitStore memory = (InMemoryRateLimitStore) this.store;
		for (Algorithm algorithm : Algorithm.values()) {
			memory.decide("expiry", algorithm.name(), List.of(spec(algorithm)), 3);
		}
		assertThat(memory.size()).isEqualTo(Algorithm.values().length);
		this.time.advance(Duration.ofSeconds(2));
		assertThat(memory.size()).as("state still matters").isEqualTo(Algorithm.values().length);
		this.time.advance(Duration.ofSeconds(1));
		assertThat(memory.size()).as("3 permits of the bucket algorithms refilled after 3s").isEqualTo(4);
		this.time.advance(Duration.ofSeconds(W_SECONDS - 4));
		assertThat(memory.size()).as("window algorithms still count").isEqualTo(4);
		this.time.advance(Duration.ofSeconds(W_SECONDS + 1));
		assertThat(memory.size()).as("fixed window, log and counter reset after W; sliding window after 2W").isZero();
	}

	@Test
	void rejectedRequestsOnUnknownKeysLeaveNothingBehind() {
		InMemoryRateLimitStore memory = (InMemoryRateLimitStore) this.store;
		for (int i = 0; i < 1000; i++) {
			memory.decide("flood", "key-" + i, List.of(spec(Algorithm.TOKEN_BUCKET)), L + 1);
		}
		assertThat(memory.size()).isZero();
	}

	@Test
	void keyRotationIsBoundedByMaxKeys() {
		InMemoryRateLimitStore bounded = InMemoryRateLimitStore.builder()
			.timeSource(this.time)
			.executor(Runnable::run)
			.maxKeys(1000)
			.build();
		LimitSpec spec = LimitSpec.of(5, "1h", Algorithm.SLIDING_LOG);
		for (int i = 0; i < 100_000; i++) {
			bounded.decide("rotation", "attacker-" + i, List.of(spec), 1);
		}
		assertThat(bounded.size()).isLessThanOrEqualTo(1000);
	}

	@Test
	void aKeyThatKeepsBeingUsedSurvivesAFloodOfOneOffKeys() {
		InMemoryRateLimitStore bounded = InMemoryRateLimitStore.builder()
			.timeSource(this.time)
			.executor(Runnable::run)
			.maxKeys(100)
			.build();
		LimitSpec spec = LimitSpec.of(1_000_000, "1h", Algorithm.FIXED_WINDOW);
		for (int i = 0; i < 20_000; i++) {
			bounded.decide("mixed", "loyal", List.of(spec), 1);
			bounded.decide("mixed", "one-off-" + i, List.of(spec), 1);
		}
		assertThat(bounded.peek("mixed", "loyal", List.of(spec)).remaining()).isEqualTo(1_000_000 - 20_000);
	}

}
