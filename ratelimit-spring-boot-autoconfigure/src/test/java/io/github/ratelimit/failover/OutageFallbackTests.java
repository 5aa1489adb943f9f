package io.github.ratelimit.failover;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link OutageFallback} on its own: two instances share a limit of 20, so each decides
 * on a share of 10 while the shared store fails.
 */
class OutageFallbackTests {

	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(20, "1h", Algorithm.SLIDING_LOG));

	private final RateLimitStore shared = InMemoryRateLimitStore.create();

	private final OutageFallback outage = new OutageFallback(InMemoryRateLimitStore.create(), new FallbackLimits(2),
			new LastHeard(100, System::nanoTime));

	@Test
	void aKeyBackHereSoonAfterItsWriteBackCountsWhatTheOtherInstancesMayHaveAdmitted() {
		assertThat(admitted(20)).as("this instance's share").isEqualTo(10);
		// The shared store is back: this instance writes its 10 back; the other
		// instance, which may have admitted its share too, has not yet.
		assertThat(this.outage.writeBack(this.shared)).isTrue();
		assertThat(this.shared.peek("b", "k", LIMITS).remaining()).isEqualTo(10);
		// A blip brings the key back here: what remained when heard, 10, may be gone.
		assertThat(admitted(20)).isZero();
	}

	private long admitted(int requests) {
		long admitted = 0;
		for (int i = 0; i < requests; i++) {
			if (this.outage.decide("b", "k", LIMITS, 1, RateLimitStore.NO_MAX_DELAY, false, false).allowed()) {
				admitted++;
			}
		}
		return admitted;
	}

}
