package io.github.ratelimit.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.algorithm.LimitState;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The contract every {@link RateLimitStore} meets, for every {@link Algorithm}. A store
 * runs it by extending this class and implementing
 * {@link #createStore(ManualTimeSource)}; the store must read time only from the given
 * source.
 * <p>
 * Unless a test says otherwise a limit is {@value #L} permits per {@value #W_SECONDS}
 * seconds (one permit per second for the bucket algorithms), and time starts at the start
 * of a window.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public abstract class RateLimitStoreContractTests {

	/** The limit used by most tests. */
	protected static final long L = 10;

	/** The window used by most tests, in seconds. */
	protected static final long W_SECONDS = 10;

	private static final long SECOND = 1_000_000L;

	private static final long MILLI = 1_000L;

	private static final long W = W_SECONDS * SECOND;

	/** A start time aligned to every window the tests use (hours included). */
	protected static final long START = 1_800_000_000_000_000L;

	private static final AtomicInteger BUCKETS = new AtomicInteger();

	private static final Map<Class<?>, SharedStore> SHARED_STORES = new ConcurrentHashMap<>();

	protected ManualTimeSource time;

	protected RateLimitStore store;

	private String bucket;

	/**
	 * Creates the store under test.
	 * @param time the clock the store must use for every decision
	 * @return the store
	 */
	protected abstract RateLimitStore createStore(ManualTimeSource time);

	/**
	 * Returns whether every test of the class runs on one store, created on the first
	 * test's clock and closed by {@link #closeSharedStores()}; the clock is set back to
	 * {@link #START} before each test. Buckets of their own keep the tests apart. Redis
	 * stores return {@code true}: a store per test costs a connection and a script load
	 * per test, several times what the test itself takes.
	 * @return {@code true} to share one store across the class's tests
	 */
	protected boolean sharesStoreAcrossTests() {
		return false;
	}

	@BeforeEach
	void createStoreAndBucket() {
		if (sharesStoreAcrossTests()) {
			SharedStore shared = SHARED_STORES.computeIfAbsent(getClass(), (testClass) -> {
				ManualTimeSource clock = new ManualTimeSource(START);
				return new SharedStore(clock, createStore(clock));
			});
			shared.time().restart(START);
			this.time = shared.time();
			this.store = shared.store();
		}
		else {
			this.time = new ManualTimeSource(START);
			this.store = createStore(this.time);
		}
		// A bucket per test keeps tests apart in stores shared across tests (one Redis).
		this.bucket = "contract-" + ProcessHandle.current().pid() + "-" + BUCKETS.incrementAndGet() + "-"
				+ System.nanoTime();
	}

	@AfterEach
	void closeStore() {
		if (!sharesStoreAcrossTests()) {
			this.store.close();
		}
	}

	/**
	 * Closes the stores shared across tests. Runs after the class's tests; a subclass
	 * that shuts its client down in its own {@code @AfterAll} calls this first.
	 */
	@AfterAll
	protected static void closeSharedStores() {
		SHARED_STORES.values().removeIf((shared) -> {
			shared.store().close();
			return true;
		});
	}

	protected static LimitSpec spec(Algorithm algorithm) {
		return LimitSpec.builder().limit(L).window(Duration.ofSeconds(W_SECONDS)).algorithm(algorithm).build();
	}

	private Decision decide(LimitSpec spec) {
		return decide("k", spec, 1);
	}

	private Decision decide(String key, LimitSpec spec, long cost) {
		return this.store.decide(this.bucket, key, List.of(spec), cost);
	}

	private Decision peek(LimitSpec spec) {
		return this.store.peek(this.bucket, "k", List.of(spec));
	}

	private void exhaust(LimitSpec spec) {
		exhaust("k", spec);
	}

	private void exhaust(String key, LimitSpec spec) {
		for (int i = 0; i < L; i++) {
			assertThat(decide(key, spec, 1).allowed()).as("request %d of %d", i + 1, L).isTrue();
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void firstRequestIsAllowedWithLimitMinusOneRemaining(Algorithm algorithm) {
		Decision decision = decide(spec(algorithm));
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.limit()).isEqualTo(L);
		assertThat(decision.remaining()).isEqualTo(L - 1);
		assertThat(decision.retryAfterMicros()).isZero();
		assertThat(decision.delayMicros()).isZero();
		assertThat(decision.resetAfterMicros()).isPositive().isLessThanOrEqualTo(2 * W);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void exactlyTheLimitIsAllowedThenRequestsAreRejected(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		for (int i = 0; i < L; i++) {
			Decision decision = decide(spec);
			assertThat(decision.allowed()).as("request %d", i + 1).isTrue();
			assertThat(decision.remaining()).isEqualTo(L - 1 - i);
		}
		for (int i = 0; i < 3; i++) {
			Decision decision = decide(spec);
			assertThat(decision.allowed()).isFalse();
			assertThat(decision.remaining()).isZero();
			assertThat(decision.retryAfterMicros()).isPositive().isLessThanOrEqualTo(2 * W);
			assertThat(decision.retryable()).isTrue();
			assertThat(decision.delayMicros()).isZero();
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void fullCapacityComesBackAfterResetAfter(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		exhaust(spec);
		Decision rejected = decide(spec);
		assertThat(rejected.allowed()).isFalse();
		long resetAfter = rejected.resetAfterMicros();
		assertThat(resetAfter).isPositive();
		this.time.advanceMicros(resetAfter - MILLI);
		assertThat(peek(spec).remaining()).as("just before resetAfter").isLessThan(L);
		this.time.advanceMicros(MILLI);
		assertThat(peek(spec).remaining()).as("at resetAfter").isEqualTo(L);
		assertThat(peek(spec).resetAfterMicros()).isZero();
		exhaust(spec);
		assertThat(decide(spec).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void permitsComeBackOverTime(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		exhaust(spec);
		this.time.advanceMicros(3 * W);
		for (int i = 0; i < L; i++) {
			assertThat(decide(spec).allowed()).isTrue();
		}
		assertThat(decide(spec).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void costTakesSeveralPermits(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		Decision three = decide("k", spec, 3);
		assertThat(three.allowed()).isTrue();
		assertThat(three.remaining()).isEqualTo(L - 3);
		Decision eight = decide("k", spec, 8);
		assertThat(eight.allowed()).isFalse();
		assertThat(eight.remaining()).isEqualTo(L - 3);
		Decision seven = decide("k", spec, 7);
		assertThat(seven.allowed()).isTrue();
		assertThat(seven.remaining()).isZero();
		assertThat(decide(spec).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void costAboveCapacityIsRejectedForeverAndConsumesNothing(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		Decision decision = decide("k", spec, L + 1);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.retryable()).isFalse();
		assertThat(decision.retryAfterMicros()).isEqualTo(Decision.NEVER);
		assertThat(decision.remaining()).isEqualTo(L);
		exhaust(spec);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void burstSetsTheCapacityOfBucketAlgorithms(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm).toBuilder().burst(3).build();
		long capacity = algorithm.usesBurst() ? 3 : L;
		for (int i = 0; i < capacity; i++) {
			assertThat(decide(spec).allowed()).isTrue();
		}
		assertThat(decide(spec).allowed()).isFalse();
		assertThat(decide("other", spec, capacity + 1).retryable()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void retryAfterIsHonest(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		Random random = new Random(42 + algorithm.ordinal());
		int honestyChecks = 0;
		for (int step = 0; step < 400; step++) {
			this.time.advanceMicros(random.nextInt(3) == 0 ? 0 : (long) random.nextInt((int) (W / L / 2)));
			long cost = 1 + random.nextInt(3);
			Decision decision = decide("k", spec, cost);
			if (decision.allowed()) {
				continue;
			}
			long retryAfter = decision.retryAfterMicros();
			assertThat(retryAfter).isPositive().isLessThanOrEqualTo(2 * W);
			if (retryAfter > MILLI) {
				this.time.advanceMicros(retryAfter - MILLI);
				assertThat(decide("k", spec, cost).allowed())
					.as("1ms before retryAfter %dus (%s)", retryAfter, decision)
					.isFalse();
				this.time.advanceMicros(MILLI);
			}
			else {
				this.time.advanceMicros(retryAfter);
			}
			assertThat(decide("k", spec, cost).allowed()).as("at retryAfter %dus (%s)", retryAfter, decision).isTrue();
			honestyChecks++;
		}
		assertThat(honestyChecks).isGreaterThan(50);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void remainingIsNeverNegative(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		decide("k", spec, L - 1);
		for (int cost = 1; cost <= L; cost++) {
			assertThat(decide("k", spec, cost).remaining()).isBetween(0L, L);
		}
		assertThat(peek(spec).remaining()).isBetween(0L, L);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keysAndBucketsAreIsolated(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		exhaust(spec);
		assertThat(decide(spec).allowed()).isFalse();
		assertThat(decide("other", spec, 1).allowed()).isTrue();
		assertThat(decide("", spec, 1).allowed()).isTrue();
		assertThat(this.store.decide(this.bucket + "-other", "k", List.of(spec), 1).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void peekDoesNotConsume(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		Decision fresh = peek(spec);
		assertThat(fresh.allowed()).isTrue();
		assertThat(fresh.remaining()).isEqualTo(L);
		assertThat(fresh.resetAfterMicros()).isZero();
		decide("k", spec, 4);
		for (int i = 0; i < 3; i++) {
			assertThat(peek(spec).remaining()).isEqualTo(L - 4);
		}
		decide("k", spec, L - 4);
		Decision exhausted = peek(spec);
		assertThat(exhausted.allowed()).isFalse();
		assertThat(exhausted.remaining()).isZero();
		assertThat(exhausted.retryAfterMicros()).isPositive();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void resetMakesTheLimitFullAgain(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		exhaust(spec);
		this.store.reset(this.bucket, "k", List.of(spec));
		assertThat(peek(spec).remaining()).isEqualTo(L);
		exhaust(spec);
	}

	static Stream<Arguments> algorithmPairs() {
		return Stream.of(Algorithm.values())
			.flatMap((a) -> Stream.of(Arguments.of(a, a), Arguments.of(a, Algorithm.TOKEN_BUCKET),
					Arguments.of(Algorithm.FIXED_WINDOW, a)));
	}

	@ParameterizedTest
	@MethodSource("algorithmPairs")
	void severalLimitsAreAllOrNothing(Algorithm first, Algorithm second) {
		LimitSpec wide = spec(first);
		LimitSpec narrow = LimitSpec.builder().limit(3).window(Duration.ofSeconds(1)).algorithm(second).build();
		List<LimitSpec> both = List.of(wide, narrow);
		for (int i = 0; i < 3; i++) {
			Decision decision = this.store.decide(this.bucket, "k", both, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.limits()).hasSize(2);
			assertThat(decision.limits().get(0).remaining()).isEqualTo(L - 1 - i);
			assertThat(decision.limits().get(1).remaining()).isEqualTo(2 - i);
		}
		Decision rejected = this.store.decide(this.bucket, "k", both, 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.limits().get(0).allowed()).isTrue();
		assertThat(rejected.limits().get(1).allowed()).isFalse();
		assertThat(rejected.limit()).isEqualTo(3);
		assertThat(rejected.retryAfterMicros()).isEqualTo(rejected.limits().get(1).retryAfterMicros());
		// The rejected call took nothing from the limit that allowed it.
		assertThat(this.store.peek(this.bucket, "k", both).limits().get(0).remaining()).isEqualTo(L - 3);
		assertThat(this.store.decide(this.bucket, "k", both, 1).allowed()).isFalse();
		assertThat(this.store.peek(this.bucket, "k", both).limits().get(0).remaining()).isEqualTo(L - 3);
		this.time.advanceMicros(rejected.retryAfterMicros());
		Decision after = this.store.decide(this.bucket, "k", both, 1);
		assertThat(after.allowed()).isTrue();
		assertThat(after.limits().get(0).remaining()).isEqualTo(L - 4);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRejectionByTheFirstLimitConsumesNothingFromTheSecond(Algorithm algorithm) {
		LimitSpec small = LimitSpec.builder()
			.limit(2)
			.window(Duration.ofSeconds(W_SECONDS))
			.algorithm(algorithm)
			.build();
		LimitSpec large = spec(Algorithm.SLIDING_LOG);
		List<LimitSpec> both = List.of(small, large);
		assertThat(this.store.decide(this.bucket, "k", both, 2).allowed()).isTrue();
		for (int i = 0; i < 5; i++) {
			assertThat(this.store.decide(this.bucket, "k", both, 1).allowed()).isFalse();
		}
		assertThat(this.store.peek(this.bucket, "k", both).limits().get(1).remaining()).isEqualTo(L - 2);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void refundedPermitsAreAvailableAgainButNeverAboveTheLimit(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		decide("k", spec, 5);
		this.store.refund(this.bucket, "k", List.of(spec), 2);
		if (!algorithm.supportsRefund()) {
			assertThat(peek(spec).remaining()).as("leaky bucket ignores refunds").isEqualTo(L - 5);
			return;
		}
		assertThat(peek(spec).remaining()).isEqualTo(L - 3);
		this.store.refund(this.bucket, "k", List.of(spec), 100);
		assertThat(peek(spec).remaining()).isEqualTo(L);
		exhaust(spec);
		assertThat(decide(spec).allowed()).isFalse();
		this.store.refund(this.bucket, "k", List.of(spec), 1);
		assertThat(decide(spec).allowed()).isTrue();
		assertThat(decide(spec).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void refundOfAnUnknownKeyChangesNothing(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		this.store.refund(this.bucket, "never-seen", List.of(spec), 3);
		assertThat(this.store.peek(this.bucket, "never-seen", List.of(spec)).remaining()).isEqualTo(L);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aChargeTakesPermitsWhetherOrNotARequestWouldBeAllowed(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		decide("k", spec, 3);
		this.store.charge(this.bucket, "k", List.of(spec), new long[] { 5 });
		assertThat(peek(spec).remaining()).isEqualTo(L - 8);
		this.store.charge(this.bucket, "k", List.of(spec), new long[] { 5 });
		assertThat(peek(spec).remaining()).isZero();
		Decision rejected = decide(spec);
		assertThat(rejected.allowed()).isFalse();
		assertHonest(spec, rejected, 1);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class,
			names = { "FIXED_WINDOW", "SLIDING_LOG", "SLIDING_WINDOW", "SLIDING_WINDOW_COUNTER" })
	void aWindowOwesWhatWasChargedBeyondItsLimitUpToOneLimit(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		this.store.charge(this.bucket, "k", List.of(spec), new long[] { L + 3 });
		this.store.refund(this.bucket, "k", List.of(spec), 2);
		assertThat(decide(spec).allowed()).as("one permit still owed").isFalse();
		this.store.refund(this.bucket, "k", List.of(spec), 2);
		assertThat(decide(spec).allowed()).isTrue();
		assertThat(decide(spec).allowed()).isFalse();

		this.store.charge(this.bucket, "k", List.of(spec), new long[] { 5 * L });
		this.store.refund(this.bucket, "k", List.of(spec), L);
		assertThat(peek(spec).remaining()).as("owed at most one limit").isZero();
		this.store.refund(this.bucket, "k", List.of(spec), 1);
		assertThat(decide(spec).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "GCRA" })
	void aBucketOwesNoMoreThanItsCapacity(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		this.store.charge(this.bucket, "k", List.of(spec), new long[] { L + 3 });
		assertThat(peek(spec).remaining()).isZero();
		this.store.refund(this.bucket, "k", List.of(spec), 2);
		assertThat(peek(spec).remaining()).isEqualTo(2);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aChargeOfNothingChangesNothing(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		this.store.charge(this.bucket, "k", List.of(spec), new long[] { 0 });
		assertThat(peek(spec).remaining()).isEqualTo(L);
		assertThat(peek(spec).resetAfterMicros()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aChargeTakesFromEachLimitOnItsOwn(Algorithm algorithm) {
		LimitSpec small = spec(algorithm);
		LimitSpec large = LimitSpec.builder()
			.limit(3 * L)
			.window(Duration.ofSeconds(W_SECONDS * 3))
			.algorithm(algorithm)
			.build();
		List<LimitSpec> limits = List.of(small, large);
		this.store.charge(this.bucket, "k", limits, new long[] { L + 2, 5 });
		List<Decision> states = this.store.peek(this.bucket, "k", limits).limits();
		assertThat(states.get(0).remaining()).isZero();
		assertThat(states.get(1).remaining()).isEqualTo(3 * L - 5);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void chargedPermitsComeBackAsTakenPermitsDo(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		this.store.charge(this.bucket, "k", List.of(spec), new long[] { L });
		Decision empty = peek(spec);
		assertThat(empty.remaining()).isZero();
		this.time.advanceMicros(empty.resetAfterMicros());
		assertThat(peek(spec).remaining()).isEqualTo(L);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRestoreTakesPermitsOnlyFromAKeyWithoutState(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		assertThat(this.store.restore(this.bucket, "k", List.of(spec), new long[] { 4 })).isTrue();
		assertThat(peek(spec).remaining()).isEqualTo(L - 4);
		assertThat(this.store.restore(this.bucket, "k", List.of(spec), new long[] { 4 })).isFalse();
		assertThat(peek(spec).remaining()).isEqualTo(L - 4);

		this.store.reset(this.bucket, "k", List.of(spec));
		assertThat(this.store.restore(this.bucket, "k", List.of(spec), new long[] { L })).isTrue();
		Decision full = peek(spec);
		assertThat(full.remaining()).isZero();
		this.time.advanceMicros(full.resetAfterMicros());
		assertThat(this.store.restore(this.bucket, "k", List.of(spec), new long[] { 1 }))
			.as("a state that came back to full is no state")
			.isTrue();
		assertThat(peek(spec).remaining()).isEqualTo(L - 1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRestoreOfSeveralLimitsFindsAnyOfTheirStates(Algorithm algorithm) {
		LimitSpec small = spec(algorithm);
		LimitSpec large = LimitSpec.builder()
			.limit(3 * L)
			.window(Duration.ofSeconds(W_SECONDS * 3))
			.algorithm(algorithm)
			.build();
		List<LimitSpec> limits = List.of(small, large);
		this.store.charge(this.bucket, "k", limits, new long[] { 0, 1 });
		assertThat(this.store.restore(this.bucket, "k", limits, new long[] { 2, 2 })).isFalse();
		List<Decision> states = this.store.peek(this.bucket, "k", limits).limits();
		assertThat(states.get(0).remaining()).isEqualTo(L);
		assertThat(states.get(1).remaining()).isEqualTo(3 * L - 1);
	}

	@Test
	void badChargesAreRejectedWithAMessageNamingThem() {
		List<LimitSpec> limits = List.of(spec(Algorithm.TOKEN_BUCKET));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.store.charge(this.bucket, "k", limits, new long[] { -1 }))
			.withMessageContaining("costs[0] must not be negative but was -1");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.store.restore(this.bucket, "k", limits, new long[] { 1, 2 }))
			.withMessageContaining("costs must have one cost per limit (1) but had 2");
	}

	@Test
	void fixedWindowAdmitsTwiceTheLimitAcrossAWindowEdge() {
		LimitSpec spec = spec(Algorithm.FIXED_WINDOW);
		this.time.advanceMicros(W - MILLI);
		assertThat(admitted(spec, 2 * L)).isEqualTo(L);
		this.time.advanceMicros(MILLI);
		assertThat(admitted(spec, 2 * L)).as("a new window right after the edge").isEqualTo(L);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "SLIDING_WINDOW", "SLIDING_WINDOW_COUNTER" })
	void slidingAlgorithmsHaveNoBurstAcrossAWindowEdge(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		this.time.advanceMicros(W - MILLI);
		assertThat(admitted(spec, 2 * L)).isEqualTo(L);
		this.time.advanceMicros(MILLI);
		assertThat(admitted(spec, 2 * L)).as("right after the window edge").isZero();
		this.time.advanceMicros(W / 2);
		assertThat(admitted(spec, 2 * L)).as("half a window later").isLessThanOrEqualTo(L / 2 + 1);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "SLIDING_WINDOW_COUNTER" })
	void exactSlidingAlgorithmsNeverAdmitMoreThanTheLimitInAnyWindow(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		Random random = new Random(7);
		List<Long> admittedAt = new ArrayList<>();
		for (int step = 0; step < 2000; step++) {
			this.time.advanceMicros(random.nextInt((int) (W / L)));
			if (decide(spec).allowed()) {
				admittedAt.add(this.time.nowMicros());
			}
		}
		// SWC counts whole sub-windows, so its window is W plus up to one segment.
		long window = (algorithm == Algorithm.SLIDING_LOG) ? W : W - spec.segmentMicros();
		for (int i = 0; i < admittedAt.size(); i++) {
			long from = admittedAt.get(i);
			long inWindow = admittedAt.stream().filter((t) -> t >= from && t < from + window).count();
			assertThat(inWindow).as("admitted in [%d, %d)", from, from + window).isLessThanOrEqualTo(L);
		}
		assertThat(admittedAt.size()).isGreaterThan(100);
	}

	@Test
	void slidingWindowStaysWithinItsErrorBound() {
		// The weighted estimate assumes the previous window's requests were spread
		// evenly, so in any window of length W it admits at most 2L and, with steady
		// traffic, about L.
		LimitSpec spec = spec(Algorithm.SLIDING_WINDOW);
		long admittedInTwoWindows = 0;
		for (int step = 0; step < 2 * W / (W / L / 4); step++) {
			this.time.advanceMicros(W / L / 4);
			if (decide(spec).allowed()) {
				admittedInTwoWindows++;
			}
		}
		assertThat(admittedInTwoWindows).isBetween(2 * L - 2, 2 * L + 2);
	}

	@Test
	void leakyBucketDelaysGrowByTheEmissionIntervalAndAFullQueueRejects() {
		LimitSpec spec = spec(Algorithm.LEAKY_BUCKET);
		long interval = W / L;
		for (int i = 0; i < L; i++) {
			Decision decision = decide(spec);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.delayMicros()).as("delay of request %d", i + 1).isEqualTo(i * interval);
		}
		Decision full = decide(spec);
		assertThat(full.allowed()).isFalse();
		assertThat(full.delayMicros()).isZero();
		assertThat(full.retryAfterMicros()).isEqualTo(interval);
		this.time.advanceMicros(interval);
		Decision next = decide(spec);
		assertThat(next.allowed()).isTrue();
		assertThat(next.delayMicros()).isEqualTo((L - 1) * interval);
	}

	@Test
	void leakyBucketRejectsADelayLongerThanTheCallerAcceptsAndConsumesNothing() {
		LimitSpec spec = spec(Algorithm.LEAKY_BUCKET);
		long interval = W / L;
		for (int i = 0; i < 5; i++) {
			decide(spec);
		}
		Decision tooLong = this.store.decide(this.bucket, "k", List.of(spec), 1, 3 * interval);
		assertThat(tooLong.allowed()).isFalse();
		assertThat(tooLong.retryAfterMicros()).isEqualTo(2 * interval);
		assertThat(peek(spec).remaining()).isEqualTo(L - 5);
		Decision acceptable = this.store.decide(this.bucket, "k", List.of(spec), 1, 5 * interval);
		assertThat(acceptable.allowed()).isTrue();
		assertThat(acceptable.delayMicros()).isEqualTo(5 * interval);
	}

	static IntStream seeds() {
		return IntStream.rangeClosed(1, 25);
	}

	@ParameterizedTest
	@MethodSource("seeds")
	void tokenBucketAndGcraDecideTheSameOnRandomTraces(int seed) {
		Random random = new Random(seed);
		long limit = 1 + random.nextInt(50);
		Duration window = Duration.ofMillis(10 + random.nextInt(60_000));
		long burst = 1 + random.nextInt((int) (2 * limit));
		LimitSpec tokenBucket = LimitSpec.builder()
			.limit(limit)
			.window(window)
			.burst(burst)
			.algorithm(Algorithm.TOKEN_BUCKET)
			.build();
		LimitSpec gcra = tokenBucket.toBuilder().algorithm(Algorithm.GCRA).build();
		long meanGap = window.toNanos() / 1000L / limit;
		int allowed = 0;
		for (int step = 0; step < 300; step++) {
			this.time.advanceMicros((random.nextInt(4) == 0) ? 0 : (long) (random.nextDouble() * 2 * meanGap));
			long cost = (random.nextInt(20) == 0) ? burst + 1 : 1 + random.nextInt((int) Math.min(3, burst));
			Decision a = this.store.decide(this.bucket, "tb", List.of(tokenBucket), cost);
			Decision b = this.store.decide(this.bucket, "gcra", List.of(gcra), cost);
			String context = "seed " + seed + ", step " + step + ", " + tokenBucket + ", cost " + cost;
			assertThat(b.allowed()).as(context).isEqualTo(a.allowed());
			assertThat(b.remaining()).as(context).isEqualTo(a.remaining());
			assertThat(b.retryAfterMicros()).as(context).isEqualTo(a.retryAfterMicros());
			assertThat(b.resetAfterMicros()).as(context).isEqualTo(a.resetAfterMicros());
			allowed += a.allowed() ? 1 : 0;
		}
		assertThat(allowed).as("trace mixes allowed and rejected").isBetween(1, 299);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void manyThreadsOnOneKeyAdmitExactlyTheLimit(Algorithm algorithm) throws Exception {
		int limit = 100;
		LimitSpec spec = LimitSpec.builder().limit(limit).window(Duration.ofMinutes(1)).algorithm(algorithm).build();
		int threads = 8;
		int attemptsPerThread = 40;
		AtomicLong admitted = new AtomicLong();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				futures.add(pool.submit(() -> {
					start.await();
					for (int i = 0; i < attemptsPerThread; i++) {
						if (this.store.decide(this.bucket, "hot", List.of(spec), 1).allowed()) {
							admitted.incrementAndGet();
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(admitted.get()).isEqualTo(limit);
		assertThat(this.store.peek(this.bucket, "hot", List.of(spec)).remaining()).isZero();
	}

	@Test
	void badArgumentsAreRejectedWithAMessageNamingThem() {
		LimitSpec spec = spec(Algorithm.TOKEN_BUCKET);
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.decide(this.bucket, "k", List.of(spec), 0))
			.withMessageContaining("cost");
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.decide(this.bucket, "k", List.of(spec), -5))
			.withMessageContaining("-5");
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.decide(this.bucket, null, List.of(spec), 1))
			.withMessageContaining("key");
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.decide(null, "k", List.of(spec), 1))
			.withMessageContaining("bucket");
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.decide(this.bucket, "k", List.of(), 1))
			.withMessageContaining("limits");
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void unusualKeysAreKeptApart(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		String longKey = "x".repeat(10_000);
		List<String> keys = List.of("{braces}", "}{", "a b", "line\nbreak", "tab\tand\u0000nul", "ünïcödé ✓", longKey,
				longKey + "y", "", ":", "k:1", "k", "K");
		for (String key : keys) {
			assertThat(decide(key, spec, L).allowed()).as("first use of key %s", key.length()).isTrue();
		}
		for (String key : keys) {
			assertThat(decide(key, spec, 1).allowed()).as("key exhausted %s", key.length()).isFalse();
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keysThatDifferOnlyInALoneSurrogateAreKeptApart(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		// UTF-8 has no bytes for a lone surrogate: String.getBytes gives '?' for it.
		String longKey = "x".repeat(10_000);
		List<String> keys = List.of("a\uD800", "a?", "a\uDC00", "a\uFFFD", "\uDC00\uD800", "??", "\uD83D\uDE00",
				"\uD83D?", longKey + "\uD800", longKey + "?", longKey + "\uDC00", longKey + "\uFFFD");
		List<String> buckets = List.of(this.bucket + "\uD800", this.bucket + "?", this.bucket + "\uDBFF");
		for (String key : keys) {
			assertThat(decide(key, spec, L).allowed()).as("first use of key %s", describe(key)).isTrue();
		}
		for (String bucket : buckets) {
			assertThat(this.store.decide(bucket, "k", List.of(spec), L).allowed())
				.as("first use of bucket %s", describe(bucket))
				.isTrue();
		}
		for (String key : keys) {
			assertThat(decide(key, spec, 1).allowed()).as("key exhausted %s", describe(key)).isFalse();
		}
		for (String bucket : buckets) {
			assertThat(this.store.decide(bucket, "k", List.of(spec), 1).allowed())
				.as("bucket exhausted %s", describe(bucket))
				.isFalse();
		}
	}

	/** A key's UTF-16 code units, readable in a failure message. */
	private static String describe(String key) {
		String tail = key.substring(Math.max(0, key.length() - 3));
		StringBuilder units = new StringBuilder("(" + key.length() + " chars, ending");
		tail.chars().forEach((unit) -> units.append(String.format(" U+%04X", unit)));
		return units.append(')').toString();
	}

	// Spec changes on a live key: limit, window, burst, segments and algorithm, up and
	// down, on fresh, partly used and exhausted keys. A change of limit or burst keeps
	// the state and reads it under the new values; a change of algorithm, window or
	// segments starts a state of its own (the old one comes back if the change is undone
	// within its lifetime). Either way no key is stuck and every retry-after comes true.

	/** How a key is used before the change. */
	enum Usage {

		FRESH(0), PARTLY_USED(4), EXHAUSTED(L);

		final long used;

		Usage(long used) {
			this.used = used;
		}

	}

	static Stream<Arguments> specChanges() {
		List<Arguments> changes = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			LimitSpec before = spec(algorithm);
			List<LimitSpec> afters = new ArrayList<>();
			afters.add(before.toBuilder().limit(2 * L).build());
			afters.add(before.toBuilder().limit(L / 2 - 1).build());
			afters.add(before.toBuilder().window(Duration.ofSeconds(2 * W_SECONDS)).build());
			afters.add(before.toBuilder().window(Duration.ofSeconds(W_SECONDS / 5)).build());
			if (algorithm.usesBurst()) {
				afters.add(before.toBuilder().burst(2 * L).build());
				afters.add(before.toBuilder().burst(L / 2 - 1).build());
				afters.add(before.toBuilder().limit(2 * L).window(Duration.ofSeconds(W_SECONDS / 5)).burst(3).build());
			}
			if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
				afters.add(before.toBuilder().segments(20).build());
				afters.add(before.toBuilder().segments(5).build());
			}
			for (Algorithm other : Algorithm.values()) {
				if (other != algorithm) {
					afters.add(before.toBuilder().algorithm(other).build());
				}
			}
			for (LimitSpec after : afters) {
				for (Usage usage : Usage.values()) {
					changes.add(Arguments.of(before, after, usage));
				}
			}
		}
		return changes.stream();
	}

	@ParameterizedTest(name = "{0} -> {1}, {2}")
	@MethodSource("specChanges")
	void aLiveKeyStaysHonestAcrossASpecChange(LimitSpec before, LimitSpec after, Usage usage) {
		if (usage.used > 0) {
			assertThat(decide("k", before, usage.used).allowed()).isTrue();
		}
		long elapsed = W / 4;
		this.time.advanceMicros(elapsed);
		Decision changed = peek(after);
		assertThat(changed.remaining()).as("remaining after the change").isBetween(0L, after.capacity());
		assertThat(changed.resetAfterMicros()).as("reset-after after the change").isBetween(0L, longestReset(after));
		assertThat(changed.remaining()).as("what the change carries over")
			.isEqualTo(expectedRemaining(before, after, usage.used, elapsed));
		long admitted = 0;
		long step = Math.max(1, after.windowMicros() / after.limit() / 3);
		long end = this.time.nowMicros() + 2 * longestReset(after);
		int honestyChecks = 0;
		while (this.time.nowMicros() < end) {
			Decision decision = decide("k", after, 1);
			if (decision.allowed()) {
				admitted++;
				assertThat(decision.remaining()).isLessThan(after.capacity());
				this.time.advanceMicros(step);
				continue;
			}
			assertThat(decision.retryAfterMicros()).as("retry-after of %s", decision)
				.isBetween(1L, longestReset(after));
			assertThat(decision.resetAfterMicros()).isLessThanOrEqualTo(longestReset(after));
			assertHonest(after, decision, 1);
			admitted++;
			honestyChecks++;
		}
		assertThat(admitted).as("admitted after the change").isGreaterThanOrEqualTo(after.capacity());
		this.time.advanceMicros(longestReset(after));
		Decision rested = peek(after);
		assertThat(rested.remaining()).as("full again after resting").isEqualTo(after.capacity());
		assertThat(rested.resetAfterMicros()).isZero();
		assertThat(honestyChecks).as("rejections whose retry-after was checked").isPositive();
	}

	/**
	 * The permits a key has right after a change, {@code elapsed} after it used
	 * {@code used} permits at the start of a window under {@code before}.
	 */
	private static long expectedRemaining(LimitSpec before, LimitSpec after, long used, long elapsed) {
		if (!LimitState.sameShape(before, after)) {
			return after.capacity();
		}
		if (!after.algorithm().usesBurst()) {
			return Math.max(0, after.capacity() - used);
		}
		return IdealBucket.remainingAfterChange(before, after, used, elapsed);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aStateComesBackWhenAChangeIsUndoneWithinItsLifetime(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		LimitSpec other = spec.toBuilder()
			.algorithm(algorithm.usesBurst() ? Algorithm.FIXED_WINDOW : algorithm)
			.window(Duration.ofSeconds(2 * W_SECONDS))
			.build();
		exhaust(spec);
		assertThat(admitted(other, L)).as("the other spec's own state").isEqualTo(L);
		Decision back = decide(spec);
		assertThat(back.allowed()).as("the first spec's state is back").isFalse();
		assertHonest(spec, back, 1);
		assertThat(decide(other).allowed()).as("and so is the other's").isFalse();
	}

	// Extremes: costs up to Long.MAX_VALUE, limits and windows at the bounds LimitSpec
	// allows, waits that must saturate.

	static Stream<Arguments> hugeCosts() {
		long[] costs = { L + 1, Integer.MAX_VALUE + 1L, LimitSpec.MAX_LIMIT, LimitSpec.MAX_LIMIT + 1,
				LimitSpec.MAX_LIMIT + 2, Long.MAX_VALUE / 2, Long.MAX_VALUE - 1, Long.MAX_VALUE };
		return Stream.of(Algorithm.values())
			.flatMap((algorithm) -> LongStream.of(costs).mapToObj((cost) -> Arguments.of(algorithm, cost)));
	}

	@ParameterizedTest
	@MethodSource("hugeCosts")
	void aHugeCostIsRejectedForeverAndTakesNothingFromAFreshOrUsedKey(Algorithm algorithm, long cost) {
		LimitSpec spec = spec(algorithm);
		Decision fresh = decide("k", spec, cost);
		assertThat(fresh.allowed()).isFalse();
		assertThat(fresh.retryAfterMicros()).isEqualTo(Decision.NEVER);
		assertThat(fresh.remaining()).isEqualTo(L);
		assertThat(decide("k", spec, 3).allowed()).isTrue();
		Decision used = decide("k", spec, cost);
		assertThat(used.allowed()).isFalse();
		assertThat(used.retryAfterMicros()).isEqualTo(Decision.NEVER);
		assertThat(used.remaining()).isEqualTo(L - 3);
		assertThat(peek(spec).remaining()).isEqualTo(L - 3);
		for (int i = 3; i < L; i++) {
			assertThat(decide(spec).allowed()).as("request %d after the huge cost", i + 1).isTrue();
		}
		assertThat(decide(spec).allowed()).as("the limit still holds").isFalse();
		assertThat(decide("k", spec, cost).retryAfterMicros()).isEqualTo(Decision.NEVER);
	}

	@ParameterizedTest
	@MethodSource("hugeCosts")
	void aHugeCostIsRejectedOnAKeyThatUsedMoreThanALoweredLimit(Algorithm algorithm, long cost) {
		LimitSpec spec = spec(algorithm);
		assertThat(decide("k", spec, 5).allowed()).isTrue();
		LimitSpec lowered = spec.toBuilder().limit(1).burst(1).build();
		Decision decision = decide("k", lowered, cost);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.retryAfterMicros()).isEqualTo(Decision.NEVER);
		assertThat(decision.remaining()).isZero();
	}

	@ParameterizedTest
	@MethodSource("hugeCosts")
	void aHugeRefundRestoresAtMostTheLimit(Algorithm algorithm, long cost) {
		LimitSpec spec = spec(algorithm);
		exhaust(spec);
		this.store.refund(this.bucket, "k", List.of(spec), cost);
		long expected = algorithm.supportsRefund() ? L : 0;
		assertThat(peek(spec).remaining()).isEqualTo(expected);
		assertThat(admitted(spec, 2 * L)).isEqualTo(expected);
	}

	/** The largest limit an algorithm allows with {@code window}, and its burst. */
	private static LimitSpec largest(Algorithm algorithm, Duration window) {
		LimitSpec.Builder builder = LimitSpec.builder().algorithm(algorithm).window(window);
		if (algorithm == Algorithm.SLIDING_LOG) {
			return builder.limit(LimitSpec.MAX_SLIDING_LOG_LIMIT).build();
		}
		if (!algorithm.usesBurst()) {
			return builder.limit(LimitSpec.MAX_LIMIT).build();
		}
		// At least one nanosecond per permit, and a burst interval of at most 2^53 ns.
		long limit = Math.min(LimitSpec.MAX_LIMIT, window.toNanos());
		long interval = window.toNanos() / limit;
		return builder.limit(limit).burst(Math.min(LimitSpec.MAX_LIMIT, (1L << 53) / interval)).build();
	}

	static Stream<Arguments> algorithmsAndLongWindows() {
		// The sliding log's largest limit is small (one entry per permit); filling it is
		// a million writes, which checks nothing the other algorithms do not.
		return Stream.of(Algorithm.values())
			.filter((algorithm) -> algorithm != Algorithm.SLIDING_LOG)
			.flatMap((algorithm) -> Stream.of(Duration.ofDays(1), Duration.ofDays(365), LimitSpec.MAX_WINDOW)
				.map((window) -> Arguments.of(algorithm, window)));
	}

	@ParameterizedTest
	@MethodSource("algorithmsAndLongWindows")
	void theLargestLimitsAreCountedExactly(Algorithm algorithm, Duration window) {
		LimitSpec spec = largest(algorithm, window);
		long capacity = spec.capacity();
		Decision first = decide("k", spec, capacity - 1);
		assertThat(first.allowed()).isTrue();
		assertThat(first.remaining()).isEqualTo(1);
		assertThat(first.resetAfterMicros()).isPositive().isLessThanOrEqualTo(longestReset(spec));
		Decision two = decide("k", spec, 2);
		assertThat(two.allowed()).as("one permit left, two asked").isFalse();
		assertThat(two.remaining()).isEqualTo(1);
		assertThat(decide("k", spec, capacity + 1).retryable()).isFalse();
		Decision last = decide("k", spec, 1);
		assertThat(last.allowed()).isTrue();
		assertThat(last.remaining()).isZero();
		Decision rejected = decide("k", spec, 1);
		assertThat(rejected.allowed()).isFalse();
		assertHonest(spec, rejected, 1);
	}

	@Test
	void theSlidingLogAtItsLargestLimit() {
		LimitSpec spec = largest(Algorithm.SLIDING_LOG, LimitSpec.MAX_WINDOW);
		assertThat(decide("k", spec, spec.limit() + 1).retryable()).isFalse();
		Decision two = decide("k", spec, 2);
		assertThat(two.allowed()).isTrue();
		assertThat(two.remaining()).isEqualTo(spec.limit() - 2);
		assertThat(decide("k", spec, spec.limit() - 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void theShortestAndLongestWindowsWork(Algorithm algorithm) {
		Duration shortest = (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) ? Duration.ofMillis(2)
				: Duration.ofMillis(1);
		// The bucket algorithms refill a burst in at most 2^53 ns (about 104 days).
		Duration longest = algorithm.usesBurst() ? Duration.ofDays(104) : LimitSpec.MAX_WINDOW;
		for (Duration window : List.of(shortest, longest)) {
			LimitSpec spec = LimitSpec.builder().limit(3).window(window).algorithm(algorithm).segments(2).build();
			String key = "w" + window.toMillis();
			assertThat(decide(key, spec, 3).allowed()).isTrue();
			Decision rejected = decide(key, spec, 1);
			assertThat(rejected.allowed()).as("%s", spec).isFalse();
			assertThat(rejected.retryAfterMicros()).isPositive().isLessThanOrEqualTo(2 * spec.windowMicros());
			assertHonest(spec, rejected, 1, key);
		}
	}

	static Stream<Arguments> slidingWindowProducts() {
		return LongStream.of(100_000, 1_000_000, 1L << 40, LimitSpec.MAX_LIMIT)
			.boxed()
			.flatMap((limit) -> Stream.of(Duration.ofDays(1), LimitSpec.MAX_WINDOW)
				.map((window) -> Arguments.of(limit, window)));
	}

	@ParameterizedTest
	@MethodSource("slidingWindowProducts")
	void slidingWindowRetryAfterIsExactWhereCountTimesTimePasses2To53(long limit, Duration window) {
		LimitSpec spec = LimitSpec.builder().limit(limit).window(window).algorithm(Algorithm.SLIDING_WINDOW).build();
		Random random = new Random(limit ^ window.toMillis());
		assertThat(decide("k", spec, limit - 1 - random.nextInt(3)).allowed()).isTrue();
		for (int step = 0; step < 20; step++) {
			this.time.advanceMicros(1 + (long) (random.nextDouble() * spec.windowMicros() / 3));
			long cost = 1 + random.nextInt(3);
			Decision decision = decide("k", spec, cost);
			if (decision.allowed()) {
				decide("k", spec, Math.max(1, decision.remaining()));
				continue;
			}
			assertHonest(spec, decision, cost);
		}
	}

	@Test
	void leakyBucketWaitsSaturateInsteadOfOverflowing() {
		LimitSpec spec = spec(Algorithm.LEAKY_BUCKET);
		long interval = W / L;
		decide("k", spec, 5);
		for (long maxDelay : new long[] { Long.MAX_VALUE - 1, Long.MAX_VALUE / 1000 + 1, Long.MAX_VALUE / 2,
				Long.MAX_VALUE / 1000 - 1 }) {
			Decision accepted = this.store.decide(this.bucket, "k", List.of(spec), 1, maxDelay);
			assertThat(accepted.allowed()).as("max delay %d", maxDelay).isTrue();
			this.store.decide(this.bucket, "k", List.of(spec), 1, 0);
		}
		Decision tooLong = this.store.decide(this.bucket, "k", List.of(spec), 1, interval);
		assertThat(tooLong.allowed()).isFalse();
		assertThat(tooLong.retryAfterMicros()).isEqualTo(8 * interval);
		this.time.advanceMicros(8 * interval - 1);
		assertThat(this.store.decide(this.bucket, "k", List.of(spec), 1, interval).allowed()).isFalse();
		this.time.advanceMicros(1);
		assertThat(this.store.decide(this.bucket, "k", List.of(spec), 1, interval).allowed()).isTrue();
	}

	// The bucket algorithms at limits whose emission interval W / L is no whole number of
	// microseconds, or of nanoseconds: they refill at exactly L per W, as the ideal
	// bucket (IdealBucket) sampled at the store's microsecond clock does.

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "GCRA", "LEAKY_BUCKET" })
	void aFullBucketOf7e8PerSecondTakesAWholeSecondToRefill(Algorithm algorithm) {
		long limit = 700_000_000L;
		LimitSpec spec = LimitSpec.builder().limit(limit).window(Duration.ofSeconds(1)).algorithm(algorithm).build();
		assertThat(decide("k", spec, limit).allowed()).isTrue();
		this.time.advanceMicros(700 * MILLI);
		Decision early = decide("k", spec, limit);
		assertThat(early.allowed()).as("a full-cost request 0.7 s after the bucket was emptied").isFalse();
		assertThat(early.remaining()).as("0.7 s brings back 0.7 of the limit").isEqualTo(490_000_000L);
		assertThat(early.retryAfterMicros()).isEqualTo(300 * MILLI);
		assertThat(early.resetAfterMicros()).isEqualTo(300 * MILLI);
		assertHonest(spec, early, limit);
		assertThat(decide("other", spec, limit).allowed()).isTrue();
		this.time.advanceMicros(SECOND);
		assertThat(decide("other", spec, limit).allowed()).as("a full-cost request 1 s later").isTrue();
	}

	static Stream<Arguments> bucketsWithRepeatingIntervals() {
		Duration hour = Duration.ofHours(1);
		List<LimitSpec> specs = List.of(
				LimitSpec.builder().limit(3).window(Duration.ofSeconds(1)).burst(3_000_000).build(),
				LimitSpec.builder().limit(7).window(hour).burst(17_000).build(),
				LimitSpec.builder().limit(1_000_000_007L).window(hour).burst(1_000_000_000L).build(),
				LimitSpec.builder().limit(700_000_000L).window(Duration.ofSeconds(1)).build(),
				LimitSpec.builder().limit(999_983).window(Duration.ofMillis(1)).build(),
				largest(Algorithm.TOKEN_BUCKET, Duration.ofDays(365)),
				largest(Algorithm.TOKEN_BUCKET, LimitSpec.MAX_WINDOW));
		return Stream.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA, Algorithm.LEAKY_BUCKET)
			.flatMap((algorithm) -> specs.stream()
				.map((spec) -> Arguments.of(spec.toBuilder().algorithm(algorithm).build())));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("bucketsWithRepeatingIntervals")
	void bucketsRefillAtExactlyTheLimitPerWindow(LimitSpec spec) {
		long burst = spec.burst();
		for (long cost : LongStream.of(1, 2, 7, burst / 3 + 1, burst - 1, burst)
			.filter((c) -> c <= burst)
			.distinct()
			.toArray()) {
			String key = "cost-" + cost;
			Decision emptied = decide(key, spec, burst);
			assertThat(emptied.allowed()).isTrue();
			assertThat(emptied.remaining()).isZero();
			assertThat(emptied.resetAfterMicros()).as("refill of the burst")
				.isEqualTo(IdealBucket.refillMicros(spec, burst));
			Decision rejected = decide(key, spec, cost);
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.retryAfterMicros()).as("retry-after of cost %d", cost)
				.isEqualTo(IdealBucket.refillMicros(spec, cost));
			assertHonest(spec, rejected, cost, key);
		}
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "GCRA", "LEAKY_BUCKET" })
	void fractionsOfAMicrosecondAddUpExactlyAtTheLargestLimit(Algorithm algorithm) {
		// 2^53 - 1 per year: a permit is 0.0035 µs, and the fractions of a microsecond
		// (in 1/L µs) of two times add up past 2^53. A sum rounded by a unit makes the
		// backlog too small or too large; too large shows in the permits left.
		LimitSpec spec = largest(algorithm, Duration.ofDays(365));
		assertThat(spec.limit()).isEqualTo(LimitSpec.MAX_LIMIT);
		Random random = new Random(53);
		for (int key = 0; key < 5; key++) {
			long taken = 0;
			for (int i = 0; i < 60; i++) {
				long cost = 1 + (long) (random.nextDouble() * spec.burst() / 80);
				Decision decision = decide("k" + key, spec, cost);
				taken += cost;
				assertThat(decision.allowed()).isTrue();
				assertThat(decision.remaining()).as("after %d permits", taken).isEqualTo(spec.burst() - taken);
				assertThat(decision.resetAfterMicros()).as("after %d permits", taken)
					.isEqualTo(IdealBucket.refillMicros(spec, taken));
			}
		}
	}

	static IntStream bucketTraceSeeds() {
		return IntStream.rangeClosed(1, 15);
	}

	@ParameterizedTest
	@MethodSource("bucketTraceSeeds")
	void bucketsDecideAsTheIdealBucketOnRandomTraces(int seed) {
		Random random = new Random(seed);
		Algorithm algorithm = List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA, Algorithm.LEAKY_BUCKET).get(seed % 3);
		LimitSpec spec = randomBucket(random, algorithm);
		IdealBucket ideal = new IdealBucket(spec);
		long permit = IdealBucket.refillMicros(spec, 1);
		long refill = IdealBucket.refillMicros(spec, spec.burst());
		int allowed = 0;
		int rejected = 0;
		for (int step = 0; step < 150; step++) {
			switch (random.nextInt(8)) {
				case 0, 1 -> {
				}
				case 2 -> this.time.advanceMicros(1);
				case 3, 4 -> this.time.advanceMicros((long) (random.nextDouble() * 3 * permit));
				case 5, 6 -> this.time.advanceMicros((long) (random.nextDouble() * refill));
				default -> this.time.advanceMicros(refill + (long) (random.nextDouble() * permit));
			}
			long now = this.time.nowMicros();
			String context = "seed " + seed + ", step " + step + ", " + spec + ", t=" + (now - START);
			int op = random.nextInt(10);
			if (op == 0) {
				assertDecides(peek(spec), ideal.peek(now), context + ", peek");
				continue;
			}
			long cost = switch (random.nextInt(6)) {
				case 0 -> spec.burst();
				case 1 -> spec.burst() + 1;
				case 2 -> 1 + (long) (random.nextDouble() * spec.burst());
				default -> 1 + random.nextInt((int) Math.min(3, spec.burst()));
			};
			if (op == 1) {
				this.store.refund(this.bucket, "k", List.of(spec), cost);
				ideal.refund(now, cost);
				continue;
			}
			long maxDelay = (random.nextInt(3) == 0) ? (long) (random.nextDouble() * refill)
					: RateLimitStore.NO_MAX_DELAY;
			Decision expected = ideal.decide(now, cost, maxDelay);
			Decision actual = this.store.decide(this.bucket, "k", List.of(spec), cost, maxDelay);
			assertDecides(actual, expected, context + ", cost " + cost + ", max delay " + maxDelay);
			if (expected.allowed()) {
				allowed++;
			}
			else {
				rejected++;
			}
		}
		assertThat(allowed).as("allowed decisions").isGreaterThan(10);
		assertThat(rejected).as("rejected decisions").isGreaterThan(10);
	}

	private static void assertDecides(Decision actual, Decision expected, String context) {
		String both = context + ": " + actual + ", expected " + expected;
		assertThat(actual.allowed()).as(both).isEqualTo(expected.allowed());
		assertThat(actual.remaining()).as(both).isEqualTo(expected.remaining());
		assertThat(actual.resetAfterMicros()).as(both).isEqualTo(expected.resetAfterMicros());
		assertThat(actual.retryAfterMicros()).as(both).isEqualTo(expected.retryAfterMicros());
		assertThat(actual.delayMicros()).as(both).isEqualTo(expected.delayMicros());
	}

	/**
	 * A bucket spec whose emission interval is rarely a whole number of microseconds:
	 * limits from 1 to one per nanosecond, windows from 1 ms to the longest, bursts from
	 * 1 to the largest LimitSpec accepts.
	 */
	private static LimitSpec randomBucket(Random random, Algorithm algorithm) {
		while (true) {
			long windowMicros = switch (random.nextInt(4)) {
				case 0 -> 1000 + random.nextInt(1_000_000);
				case 1 -> 3_600_000_000L + random.nextInt(1_000_000);
				case 2 -> (long) (random.nextDouble() * 400 * 86_400_000_000L);
				default -> LimitSpec.MAX_WINDOW.toNanos() / 1000 - random.nextInt(1000);
			};
			long windowNanos = windowMicros * 1000;
			long limit = switch (random.nextInt(3)) {
				case 0 -> 1 + random.nextInt(1000);
				case 1 -> 1 + (long) (random.nextDouble() * Math.min(LimitSpec.MAX_LIMIT, windowNanos));
				default -> Math.min(LimitSpec.MAX_LIMIT, windowNanos) - random.nextInt(1000);
			};
			long largestBurst = Math.min(LimitSpec.MAX_LIMIT,
					(1L << 53) / Math.max(1, windowNanos / Math.max(1, limit)));
			long burst = switch (random.nextInt(4)) {
				case 0 -> 1 + random.nextInt(10);
				case 1 -> largestBurst;
				default -> 1 + (long) (random.nextDouble() * largestBurst);
			};
			try {
				return LimitSpec.builder()
					.algorithm(algorithm)
					.limit(limit)
					.window(Duration.ofNanos(windowNanos))
					.burst(burst)
					.build();
			}
			catch (IllegalArgumentException ex) {
				// A combination LimitSpec refuses: draw again.
			}
		}
	}

	/**
	 * The longest reset-after or retry-after a spec can report: twice the window (the
	 * sliding window's count weighs on the next window), or the bucket's refill time.
	 */
	private static long longestReset(LimitSpec spec) {
		long burstMicros = spec.algorithm().usesBurst() ? IdealBucket.refillMicros(spec, spec.burst()) : 0;
		return Math.max(2 * spec.windowMicros(), spec.algorithm().usesBurst() ? burstMicros : 0);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRejectionBlocksTheKeyForThePenaltyWithAnHonestRetryAfter(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm).toBuilder().penalty(Duration.ofMinutes(15)).build();
		exhaust(spec);
		Decision rejected = decide(spec);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		assertThat(rejected.retryAfterMicros()).isEqualTo(15 * 60 * SECOND);
		assertThat(rejected.resetAfterMicros()).isGreaterThanOrEqualTo(15 * 60 * SECOND);
		assertThat(rejected.penaltyStarted()).isTrue();
		// Long after the algorithm would allow again, the block still rejects, with the
		// retry-after counting down to its end: requests during it do not lengthen it.
		this.time.advanceMicros(10 * 60 * SECOND);
		Decision blocked = decide(spec);
		assertThat(blocked.allowed()).isFalse();
		assertThat(blocked.remaining()).isZero();
		assertThat(blocked.retryAfterMicros()).isEqualTo(5 * 60 * SECOND);
		assertThat(blocked.penaltyStarted()).as("a rejection while blocked").isFalse();
		Decision peeked = peek(spec);
		assertThat(peeked.allowed()).isFalse();
		assertThat(peeked.retryAfterMicros()).isEqualTo(5 * 60 * SECOND);
		assertThat(peeked.penaltyStarted()).isFalse();
		assertHonest(spec, blocked, 1);
		assertThat(decide(spec).remaining()).as("after the block").isEqualTo(L - 2);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aBlockTakesNoPermitsAndAPeekOrANeverAllowedRequestStartsNone(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm).toBuilder().penalty(Duration.ofMinutes(1)).build();
		exhaust(spec);
		Decision peeked = peek(spec);
		assertThat(peeked.allowed()).isFalse();
		assertThat(peeked.penaltyStarted()).isFalse();
		Decision never = decide("k", spec, L + 1);
		assertThat(never.retryAfterMicros()).as("a cost above the capacity").isEqualTo(Decision.NEVER);
		assertThat(never.penaltyStarted()).isFalse();
		Decision rejected = decide(spec);
		assertThat(rejected.retryAfterMicros()).as("the first rejection that could be allowed later")
			.isEqualTo(60 * SECOND);
		assertThat(rejected.penaltyStarted()).isTrue();
		this.time.advanceMicros(60 * SECOND);
		// The algorithm's own state went on refilling during the block: every permit is
		// back after the minute (a window is 10 seconds), none was taken by the block.
		assertThat(peek(spec).remaining()).isEqualTo(L);
		exhaust(spec);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aResetEndsABlock(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm).toBuilder().penalty(Duration.ofMinutes(15)).build();
		exhaust(spec);
		assertThat(decide(spec).allowed()).isFalse();
		this.store.reset(this.bucket, "k", List.of(spec));
		assertThat(decide(spec).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aBlockIsPerKeyAndPerLimitWithAPenalty(Algorithm algorithm) {
		LimitSpec penalized = spec(algorithm).toBuilder().penalty(Duration.ofMinutes(15)).build();
		LimitSpec roomy = LimitSpec.of(1000, Duration.ofSeconds(1), Algorithm.FIXED_WINDOW);
		List<LimitSpec> both = List.of(roomy, penalized);
		for (int i = 0; i < L; i++) {
			assertThat(this.store.decide(this.bucket, "k", both, 1).allowed()).isTrue();
		}
		Decision rejected = this.store.decide(this.bucket, "k", both, 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.retryAfterMicros()).isEqualTo(15 * 60 * SECOND);
		assertThat(rejected.limits().get(0).allowed()).as("the limit without a penalty").isTrue();
		assertThat(rejected.penaltyStarted()).isTrue();
		assertThat(rejected.limits().get(1).penaltyStarted()).isTrue();
		assertThat(rejected.limits().get(0).penaltyStarted()).isFalse();
		this.time.advanceMicros(2 * W);
		Decision blocked = this.store.decide(this.bucket, "k", both, 1);
		assertThat(blocked.allowed()).as("still blocked").isFalse();
		assertThat(blocked.penaltyStarted()).isFalse();
		assertThat(decide("other", penalized, 1).allowed()).as("another key").isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aLimitChangedToNoPenaltyNoLongerBlocks(Algorithm algorithm) {
		LimitSpec penalized = spec(algorithm).toBuilder().penalty(Duration.ofMinutes(15)).build();
		exhaust(penalized);
		assertThat(decide(penalized).allowed()).isFalse();
		this.time.advanceMicros(2 * W);
		assertThat(decide(penalized).allowed()).as("blocked").isFalse();
		assertThat(decide(spec(algorithm)).allowed()).as("the same limit without its penalty").isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void owingWhatIsLeftTakesItAsADecisionOfTheWholeCostWould(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		assertThat(decide("k", spec, 3).allowed()).isTrue();
		assertThat(this.store.owe(this.bucket, "k", List.of(spec), 2)).as("owed").isZero();
		assertThat(decide("same", spec, 5).allowed()).isTrue();
		Decision owed = peek(spec);
		Decision decided = this.store.peek(this.bucket, "same", List.of(spec));
		assertThat(owed.allowed()).isTrue();
		assertThat(owed.remaining()).isEqualTo(decided.remaining()).isEqualTo(L - 5);
		assertThat(owed.resetAfterMicros()).isEqualTo(decided.resetAfterMicros());
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void owingMoreThanIsLeftPutsTheKeyIntoDebtUntilThePermitsComeBackAtTheLimitsRate(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		Decision taken = decide("k", spec, L - 2);
		assertThat(this.store.owe(this.bucket, "k", List.of(spec), 7)).as("owed").isEqualTo(5);
		// 2 permits were left; the other 5 come back, one every W / L, once the limit is
		// full again.
		Decision rejected = decide(spec);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		long full = decide("same", spec, L).resetAfterMicros();
		assertThat(rejected.retryAfterMicros()).isEqualTo(full + 5 * W / L);
		assertThat(rejected.resetAfterMicros()).isEqualTo(rejected.retryAfterMicros());
		assertThat(taken.allowed()).isTrue();
		assertHonest(spec, rejected, 1);
		assertThat(decide(spec).remaining()).as("the debt paid, the limit full").isEqualTo(L - 2);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aDebtIsPaidWhileNobodyAsksAndTakesNothingWhileItLasts(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		assertThat(this.store.owe(this.bucket, "k", List.of(spec), 3 * L)).as("owed").isEqualTo(2 * L);
		Decision peeked = peek(spec);
		assertThat(peeked.allowed()).isFalse();
		assertThat(peeked.retryAfterMicros()).isEqualTo(decide("same", spec, L).resetAfterMicros() + 2 * W);
		for (int i = 0; i < 5; i++) {
			this.time.advanceMicros(W / 5);
			assertThat(decide(spec).allowed()).as("in debt").isFalse();
		}
		this.time.advanceMicros(peeked.retryAfterMicros() - W);
		assertThat(peek(spec).remaining()).isEqualTo(L);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void owingWhileInDebtLengthensItAndARefundShortensIt(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		assertThat(this.store.owe(this.bucket, "k", List.of(spec), L + 4)).as("owed").isEqualTo(4);
		long first = peek(spec).retryAfterMicros();
		assertThat(this.store.owe(this.bucket, "k", List.of(spec), 3)).as("owed while in debt").isEqualTo(3);
		assertThat(peek(spec).retryAfterMicros()).isEqualTo(first + 3 * W / L);
		this.store.refund(this.bucket, "k", List.of(spec), 5);
		Decision rejected = decide(spec);
		assertThat(rejected.retryAfterMicros()).isEqualTo(first - 2 * W / L);
		assertHonest(spec, rejected, 1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aResetEndsADebtAndADebtIsPerKeyAndPerLimit(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		LimitSpec roomy = LimitSpec.of(1000, Duration.ofSeconds(1), Algorithm.FIXED_WINDOW);
		List<LimitSpec> both = List.of(roomy, spec);
		assertThat(this.store.owe(this.bucket, "k", both, L + 1)).as("owed to the tighter limit").isEqualTo(1);
		Decision rejected = this.store.decide(this.bucket, "k", both, 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.limits().get(0).allowed()).as("the limit with room").isTrue();
		assertThat(rejected.limits().get(0).remaining()).as("it took the permits").isEqualTo(1000 - L - 1 - 1);
		assertThat(decide("other", spec, 1).allowed()).as("another key").isTrue();
		this.store.reset(this.bucket, "k", both);
		assertThat(this.store.decide(this.bucket, "k", both, 1).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRejectionForADebtStartsNoPenaltyAndABlockHidesNoDebt(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm).toBuilder().penalty(Duration.ofMinutes(15)).build();
		this.store.owe(this.bucket, "k", List.of(spec), L + 1);
		Decision inDebt = decide(spec);
		assertThat(inDebt.allowed()).isFalse();
		assertThat(inDebt.penaltyStarted()).isFalse();
		assertThat(inDebt.retryAfterMicros()).isLessThan(15 * 60 * SECOND);
		assertHonest(spec, inDebt, 1);
		// Blocked for the penalty, then in debt past its end: the longer one decides.
		exhaust("blocked", spec);
		assertThat(decide("blocked", spec, 1).retryAfterMicros()).isEqualTo(15 * 60 * SECOND);
		this.store.owe(this.bucket, "blocked", List.of(spec), 100 * L * 60);
		Decision both = decide("blocked", spec, 1);
		assertThat(both.retryAfterMicros()).isGreaterThan(15 * 60 * SECOND);
		assertThat(both.resetAfterMicros()).isEqualTo(both.retryAfterMicros());
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aDebtIsCappedAtTwiceTheLongestWindow(Algorithm algorithm) {
		LimitSpec spec = spec(algorithm);
		this.store.owe(this.bucket, "k", List.of(spec), Long.MAX_VALUE / 2);
		long hundredYears = 2 * LimitSpec.MAX_WINDOW.toNanos() / 1000;
		assertThat(peek(spec).retryAfterMicros()).isEqualTo(hundredYears);
		this.store.owe(this.bucket, "k", List.of(spec), 1);
		assertThat(peek(spec).retryAfterMicros()).isEqualTo(hundredYears);
	}

	/**
	 * A calendar day from local midnight: 23 hours on the spring change, 25 on the autumn
	 * one (2027, after the suite's start; the unit test of {@code CalendarUnit} has
	 * 2026's). The store's clock moves forward only.
	 */
	@ParameterizedTest
	@CsvSource({ "Europe/Berlin, 2027-03-27T23:00:00Z, 23", "Europe/Berlin, 2027-10-30T22:00:00Z, 25",
			"America/New_York, 2027-03-14T05:00:00Z, 23", "America/New_York, 2027-11-07T04:00:00Z, 25",
			"Europe/Berlin, 2027-06-14T22:00:00Z, 24" })
	void aCalendarDayRunsFromLocalMidnightToTheNextAcrossDaylightSavingChanges(String zone, String midnight,
			long hours) {
		LimitSpec day = calendar("day", zone);
		this.time.restart(micros(midnight));
		exhaust(day);
		Decision rejected = decide(day);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.retryAfterMicros()).as("the day's length").isEqualTo(hours * 3600 * SECOND);
		assertThat(rejected.resetAfterMicros()).isEqualTo(hours * 3600 * SECOND);
		this.time.advanceMicros(hours * 3600 * SECOND / 2);
		assertHonest(day, decide(day), 1);
		assertThat(peek(day).remaining()).as("the next day's first permit taken").isEqualTo(L - 1);
	}

	@ParameterizedTest
	@CsvSource({ "2027-02-01T00:00:00Z, 28", "2028-02-01T00:00:00Z, 29", "2027-04-01T00:00:00Z, 30",
			"2028-01-01T00:00:00Z, 31" })
	void aCalendarMonthLastsItsRealNumberOfDays(String first, long days) {
		LimitSpec month = calendar("month", "UTC");
		this.time.restart(micros(first) + 3600 * SECOND);
		exhaust(month);
		assertThat(decide(month).retryAfterMicros()).isEqualTo(days * 86_400 * SECOND - 3600 * SECOND);
		this.time.restart(micros(first) + days * 86_400 * SECOND - 1);
		assertThat(decide(month).allowed()).as("the month's last µs").isFalse();
		this.time.advanceMicros(1);
		assertThat(decide(month).allowed()).as("the next month's first µs").isTrue();
	}

	@Test
	void anIsoWeekRunsFromMondayAcrossTheYearsEnd() {
		LimitSpec week = calendar("week", "UTC");
		// Monday 27 December 2027 starts the week that ends the year.
		this.time.restart(micros("2027-12-29T12:00:00Z"));
		exhaust(week);
		this.time.restart(micros("2028-01-02T23:00:00Z"));
		Decision sunday = decide(week);
		assertThat(sunday.allowed()).as("Sunday 2 January, the same week").isFalse();
		assertThat(sunday.retryAfterMicros()).isEqualTo(3600 * SECOND);
		assertHonest(week, sunday, 1);
	}

	@Test
	void aQuarterAndAYearEndWithTheirLastDay() {
		LimitSpec quarter = calendar("quarter", "Europe/Berlin");
		LimitSpec year = calendar("year", "America/New_York");
		this.time.restart(micros("2027-11-15T12:00:00Z"));
		exhaust("q", quarter);
		exhaust("y", year);
		// Berlin's quarter ends at its midnight (UTC+1), New York's year at its (UTC-5).
		assertThat(decide("q", quarter, 1).retryAfterMicros())
			.isEqualTo(micros("2027-12-31T23:00:00Z") - micros("2027-11-15T12:00:00Z"));
		assertThat(decide("y", year, 1).retryAfterMicros())
			.isEqualTo(micros("2028-01-01T05:00:00Z") - micros("2027-11-15T12:00:00Z"));
	}

	@Test
	void calendarWindowsInTwoZonesAreStatesOfTheirOwn() {
		LimitSpec berlin = calendar("day", "Europe/Berlin");
		LimitSpec utc = calendar("day", "UTC");
		this.time.restart(micros("2027-06-15T12:00:00Z"));
		exhaust(berlin);
		assertThat(decide(utc).allowed()).as("another zone, another count").isTrue();
		assertThat(decide(LimitSpec.of(L, "1d", Algorithm.FIXED_WINDOW)).allowed()).as("a 24-hour window").isTrue();
	}

	private static LimitSpec calendar(String unit, String zone) {
		return LimitSpec.builder().limit(L).calendar(unit).zone(zone).algorithm(Algorithm.FIXED_WINDOW).build();
	}

	private static long micros(String instant) {
		return Instant.parse(instant).toEpochMilli() * 1000L;
	}

	/**
	 * Asserts that a rejected request of {@code cost} is still rejected just before its
	 * retry-after and allowed at it.
	 */
	private void assertHonest(LimitSpec spec, Decision rejected, long cost) {
		assertHonest(spec, rejected, cost, "k");
	}

	private void assertHonest(LimitSpec spec, Decision rejected, long cost, String key) {
		long retryAfter = rejected.retryAfterMicros();
		assertThat(retryAfter).as("retry-after of %s", rejected).isPositive().isNotEqualTo(Decision.NEVER);
		this.time.advanceMicros(retryAfter - 1);
		assertThat(decide(key, spec, cost).allowed()).as("1us before retry-after %dus of %s", retryAfter, rejected)
			.isFalse();
		this.time.advanceMicros(1);
		assertThat(decide(key, spec, cost).allowed()).as("at retry-after %dus of %s", retryAfter, rejected).isTrue();
	}

	private long admitted(LimitSpec spec, long attempts) {
		long admitted = 0;
		for (int i = 0; i < attempts; i++) {
			if (decide(spec).allowed()) {
				admitted++;
			}
		}
		return admitted;
	}

	private record SharedStore(ManualTimeSource time, RateLimitStore store) {
	}

}
