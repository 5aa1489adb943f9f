package io.github.ratelimit.store.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.algorithm.LimitState;
import io.github.ratelimit.algorithm.Transition;
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
	void idleKeysExpireWithinTheirLifetimeAndOneSecond() {
		InMemoryRateLimitStore memory = (InMemoryRateLimitStore) this.store;
		for (Algorithm algorithm : Algorithm.values()) {
			memory.decide("expiry", algorithm.name(), List.of(spec(algorithm)), 3);
		}
		assertThat(memory.size()).isEqualTo(Algorithm.values().length);
		this.time.advanceMicros(W_SECONDS * 1_000_000L - 1);
		assertThat(memory.size()).as("window algorithms still count").isEqualTo(Algorithm.values().length);
		this.time.advanceMicros(1_000_001L);
		assertThat(memory.size()).as("gone after their lifetime (W) and a second; sliding window lives 2W")
			.isEqualTo(1);
		this.time.advance(Duration.ofSeconds(W_SECONDS));
		assertThat(memory.size()).isZero();
	}

	@Test
	void aKeyDecidedOnWithoutMapWritesIsNeverDroppedWhileItsStateMatters() {
		InMemoryRateLimitStore memory = (InMemoryRateLimitStore) this.store;
		Random random = new Random(42);
		List<LimitSpec> specs = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			specs.add(LimitSpec.of(5, Duration.ofSeconds(2), algorithm));
			specs.add(
					LimitSpec.builder().limit(5).window(Duration.ofMillis(1500)).algorithm(algorithm).burst(8).build());
		}
		for (LimitSpec spec : specs) {
			LimitState reference = LimitState.fresh(spec);
			long lifetime = LimitState.lifetimeMicros(spec);
			for (int step = 0; step < 3000; step++) {
				long gap = switch (random.nextInt(10)) {
					case 0 -> lifetime + random.nextInt(2_000_000);
					case 1, 2 -> random.nextInt(1_000_000);
					default -> random.nextInt(100_000);
				};
				this.time.advanceMicros(gap);
				long now = this.time.nowMicros();
				long cost = 1 + random.nextInt(2);
				if (random.nextInt(8) == 0) {
					memory.refund("trace", spec.toString(), List.of(spec), cost);
					reference = reference.refund(spec, now, cost);
					continue;
				}
				Transition next = reference.acquire(spec, now, cost, 500_000);
				reference = next.next();
				Decision expected = next.decision();
				Decision actual = memory.decide("trace", spec.toString(), List.of(spec), cost, 500_000);
				assertThat(actual).as("%s at step %d", spec, step).hasToString(expected.toString());
			}
		}
	}

	@Test
	void concurrentDecisionsStayExactWhileTheHoldIsExtended() throws Exception {
		List<Algorithm> windowed = List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG, Algorithm.SLIDING_WINDOW,
				Algorithm.SLIDING_WINDOW_COUNTER);
		for (int k = 0; k < windowed.size(); k++) {
			Algorithm algorithm = windowed.get(k);
			long windowStart = START + (k + 1) * 60_000_000L;
			this.time.setMicros(windowStart);
			LimitSpec spec = LimitSpec.of(2000, Duration.ofSeconds(10), algorithm);
			AtomicLong allowed = new AtomicLong();
			AtomicBoolean running = new AtomicBoolean(true);
			ExecutorService threads = Executors.newFixedThreadPool(4);
			List<Future<?>> deciders = new ArrayList<>();
			for (int t = 0; t < 3; t++) {
				deciders.add(threads.submit(() -> {
					for (int i = 0; i < 1500; i++) {
						if (this.store.decide("hot", algorithm.name(), List.of(spec), 1).allowed()) {
							allowed.incrementAndGet();
						}
					}
				}));
			}
			Future<?> clock = threads.submit(() -> {
				// Through nine holds of one second each, all inside the first window.
				while (running.get() && this.time.nowMicros() < windowStart + 9_900_000L) {
					this.time.advanceMicros(10_000);
					Thread.onSpinWait();
				}
			});
			for (Future<?> decider : deciders) {
				decider.get(30, TimeUnit.SECONDS);
			}
			running.set(false);
			clock.get(30, TimeUnit.SECONDS);
			threads.shutdown();
			assertThat(allowed.get()).as(algorithm.name()).isEqualTo(2000);
		}
	}

	@Test
	void concurrentDecisionsOnSeveralLimitsTakeAllOrNothing() throws Exception {
		// Threads race to store their snapshot; the losers decide again on the winner's.
		// A sliding log next to a fixed window that rejects first: no rejected request
		// may leave an entry in the log, whichever states were dropped on the way.
		LimitSpec log = LimitSpec.of(1000, Duration.ofMinutes(1), Algorithm.SLIDING_LOG);
		LimitSpec fixed = LimitSpec.of(700, Duration.ofMinutes(10), Algorithm.FIXED_WINDOW);
		List<LimitSpec> limits = List.of(log, fixed);
		long windowStart = (START / 600_000_000L + 2) * 600_000_000L;
		this.time.setMicros(windowStart);
		AtomicLong allowed = new AtomicLong();
		AtomicBoolean running = new AtomicBoolean(true);
		ExecutorService threads = Executors.newFixedThreadPool(4);
		List<Future<?>> deciders = new ArrayList<>();
		for (int t = 0; t < 3; t++) {
			deciders.add(threads.submit(() -> {
				for (int i = 0; i < 400; i++) {
					if (this.store.decide("both", "hot", limits, 1 + (i % 2)).allowed()) {
						allowed.addAndGet(1 + (i % 2));
					}
				}
			}));
		}
		Future<?> clock = threads.submit(() -> {
			// New times keep the log appending to its shared buffer, within one window.
			while (running.get() && this.time.nowMicros() < windowStart + 50_000_000L) {
				this.time.advanceMicros(7);
				Thread.onSpinWait();
			}
		});
		for (Future<?> decider : deciders) {
			decider.get(30, TimeUnit.SECONDS);
		}
		running.set(false);
		clock.get(30, TimeUnit.SECONDS);
		threads.shutdown();
		assertThat(allowed.get()).isBetween(699L, 700L);
		Decision both = this.store.peek("both", "hot", limits);
		assertThat(both.limits()).extracting(Decision::remaining)
			.containsExactly(1000 - allowed.get(), 700 - allowed.get());
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

	@Test
	void aRejectedRequestOnANewKeyLeavesNothingBehind() {
		InMemoryRateLimitStore memory = (InMemoryRateLimitStore) this.store;
		for (Algorithm algorithm : Algorithm.values()) {
			LimitSpec spec = spec(algorithm);
			assertThat(memory.decide("rejected", algorithm.name(), List.of(spec), spec.capacity() + 1).allowed())
				.isFalse();
			assertThat(memory.decide("rejected", algorithm.name(), List.of(spec), Long.MAX_VALUE).allowed()).isFalse();
			assertThat(memory.size()).as("after rejections by %s", algorithm).isZero();
		}
		LimitSpec leaky = spec(Algorithm.LEAKY_BUCKET);
		memory.decide("rejected", "leaky", List.of(leaky), 5);
		this.time.advanceMicros(W_SECONDS * 1_000_000L);
		memory.decide("rejected", "leaky", List.of(leaky), L + 1);
		assertThat(memory.size()).as("a key whose state is fresh again and then rejected").isZero();
	}

}
