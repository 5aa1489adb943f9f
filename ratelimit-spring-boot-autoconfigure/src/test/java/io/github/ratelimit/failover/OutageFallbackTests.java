package io.github.ratelimit.failover;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link OutageFallback} on its own: two instances share a limit of 20, so each decides
 * on a share of 10 while the shared store fails, and a key written back waits for the
 * other instance's write-back before the shared store decides it again.
 */
class OutageFallbackTests {

	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(20, "1h", Algorithm.SLIDING_LOG));

	private final RateLimitStore shared = InMemoryRateLimitStore.create();

	private final AtomicLong nanoTime = new AtomicLong(System.nanoTime());

	private final OutageFallback outage = new OutageFallback(InMemoryRateLimitStore.create(), new FallbackLimits(2),
			new LastHeard(100, this.nanoTime::get));

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

	@Test
	void aKeyWrittenBackStaysHereUntilTheOtherInstancesWriteBackTheirsToo() {
		assertThat(admitted(20)).isEqualTo(10);
		assertThat(this.outage.writeBack(this.shared, "b", "k")).as("written back").isTrue();
		assertThat(this.shared.peek("b", "k", LIMITS).remaining()).isEqualTo(10);
		// Decided by the shared store now, the key would admit 10 more before the other
		// instance's 10 arrive: it stays here, taking them as admitted.
		assertThat(this.outage.pending("b", "k")).as("waits for the others").isTrue();
		assertThat(admitted(20)).isZero();
		assertThat(this.outage.writeBack(this.shared, "b", "k")).isTrue();
		assertThat(this.outage.pending("b", "k")).isTrue();
		// The other instance writes its 10 back: the key goes back to the shared store.
		long[] ten = { 10 };
		this.shared.charge("b", "k", LIMITS, ten);
		assertThat(this.outage.writeBack(this.shared, "b", "k")).isTrue();
		assertThat(this.outage.pending("b", "k")).as("settled").isFalse();
	}

	@Test
	void aKeyWrittenBackLeavesWhenTheOthersDoNotWriteBackWithinTheSettlingTime() {
		assertThat(admitted(20)).isEqualTo(10);
		assertThat(this.outage.writeBack(this.shared, "b", "k")).isTrue();
		// In the background, nothing is read again, and the key waits.
		assertThat(this.outage.writeBack(this.shared)).isTrue();
		assertThat(this.outage.writable()).as("nothing left to write").isFalse();
		assertThat(this.outage.pending("b", "k")).isTrue();
		// The other instance admitted nothing (its clients went elsewhere): after the
		// settling time, the key goes back to the shared store all the same.
		this.nanoTime.addAndGet(TimeUnit.SECONDS.toNanos(10));
		assertThat(this.outage.writeBack(this.shared)).isTrue();
		assertThat(this.outage.pending("b", "k")).isFalse();
	}

	@Test
	void aSingleInstanceDoesNotWait() {
		OutageFallback alone = new OutageFallback(InMemoryRateLimitStore.create(), new FallbackLimits(1),
				new LastHeard(100, this.nanoTime::get));
		for (int i = 0; i < 5; i++) {
			alone.decide("b", "k", LIMITS, 1, RateLimitStore.NO_MAX_DELAY, false, false);
		}
		assertThat(alone.writeBack(this.shared, "b", "k")).isTrue();
		assertThat(alone.pending("b", "k")).isFalse();
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
