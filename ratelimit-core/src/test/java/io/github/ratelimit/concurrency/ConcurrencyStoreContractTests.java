package io.github.ratelimit.concurrency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.ratelimit.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What every {@link ConcurrencyStore} does, run against each store set-up: permits up to
 * the limit, released once, leases that expire on the store's clock unless renewed, and
 * an operator's release. The suite's clock is the store's (on Redis it is sent to the
 * script), so expiry is exact to the microsecond.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public abstract class ConcurrencyStoreContractTests {

	/** A second, in microseconds. */
	protected static final long SECOND = 1_000_000;

	/** 2027-01-15T00:00:00Z, the start of every test's clock. */
	private static final long START = 1_799_971_200_000_000L;

	private static final AtomicInteger buckets = new AtomicInteger();

	/** Three in flight, a lease of 10 seconds. */
	protected static final ConcurrencyLimit THREE = new ConcurrencyLimit(3, Duration.ofSeconds(10));

	protected final ManualTimeSource time = new ManualTimeSource(START);

	private ConcurrencyStore store;

	/**
	 * A bucket of its own per test: a store shared across tests keeps no state between
	 * them.
	 */
	private String bucket;

	/**
	 * Creates the store under test on the suite's clock.
	 * @param time the clock that decides when leases expire
	 * @return the store
	 */
	protected abstract ConcurrencyStore createStore(ManualTimeSource time);

	@BeforeEach
	void createStore() {
		this.store = createStore(this.time);
		this.bucket = "cc" + buckets.incrementAndGet();
	}

	@AfterEach
	void closeStore() throws Exception {
		if (this.store instanceof AutoCloseable closeable) {
			closeable.close();
		}
	}

	@Test
	void takesPermitsUpToTheLimitThenRejectsWithTheEarliestLeaseEndAsAnEstimate() {
		for (int i = 1; i <= 3; i++) {
			ConcurrencyDecision decision = acquire("k", "h" + i);
			assertThat(decision.acquired()).isTrue();
			assertThat(decision.inFlight()).isEqualTo(i);
			assertThat(decision.remaining()).isEqualTo(3 - i);
			this.time.advanceMicros(SECOND);
		}
		ConcurrencyDecision rejected = acquire("k", "h4");
		assertThat(rejected.acquired()).isFalse();
		assertThat(rejected.inFlight()).isEqualTo(3);
		assertThat(rejected.remaining()).isZero();
		assertThat(rejected.retryAfterMicros()).as("h1's lease ends 10 s after it began, 3 s ago")
			.isEqualTo(7 * SECOND);
		assertThat(rejected.expiredLeases()).isZero();
	}

	@Test
	void aReleaseGivesThePermitBackOnceAndAnotherHoldersReleaseGivesNothing() {
		for (int i = 1; i <= 3; i++) {
			acquire("k", "h" + i);
		}
		assertThat(this.store.release(this.bucket, "k", "stranger")).isFalse();
		assertThat(acquire("k", "h4").acquired()).isFalse();
		assertThat(this.store.release(this.bucket, "k", "h2")).isTrue();
		assertThat(this.store.release(this.bucket, "k", "h2")).as("released already").isFalse();
		assertThat(acquire("k", "h4").acquired()).isTrue();
		assertThat(acquire("k", "h5").acquired()).isFalse();
	}

	@Test
	void aLeaseNeitherRenewedNorReleasedComesBackWhenItEnds() {
		acquire("k", "h1");
		this.time.advanceMicros(SECOND);
		acquire("k", "h2");
		acquire("k", "h3");
		this.time.advanceMicros(9 * SECOND - 1);
		assertThat(acquire("k", "h4").acquired()).as("h1's lease ends in 1 µs").isFalse();
		this.time.advanceMicros(1);
		ConcurrencyDecision decision = acquire("k", "h4");
		assertThat(decision.acquired()).isTrue();
		assertThat(decision.expiredLeases()).isEqualTo(1);
		assertThat(decision.inFlight()).isEqualTo(3);
		assertThat(this.store.release(this.bucket, "k", "h1")).as("the lease of a frozen holder ended").isFalse();
		assertThat(this.store.renew(this.bucket, "k", THREE, "h1")).isFalse();
	}

	@Test
	void aRenewalExtendsTheLeaseToAFullLeaseFromNow() {
		acquire("k", "h1");
		this.time.advanceMicros(9 * SECOND);
		assertThat(this.store.renew(this.bucket, "k", THREE, "h1")).isTrue();
		this.time.advanceMicros(9 * SECOND);
		Holders holders = this.store.holders(this.bucket, "k");
		assertThat(holders.count()).isEqualTo(1);
		assertThat(holders.nextExpiryMicros()).isEqualTo(SECOND);
		assertThat(this.store.renew(this.bucket, "k", THREE, "nobody")).isFalse();
		assertThat(this.store.holders(this.bucket, "k").count()).as("a renewal of nobody takes nothing").isEqualTo(1);
	}

	@Test
	void askingAgainForAHeldPermitRenewsItAndTakesNoOther() {
		acquire("k", "h1");
		this.time.advanceMicros(5 * SECOND);
		ConcurrencyDecision again = acquire("k", "h1");
		assertThat(again.acquired()).isTrue();
		assertThat(again.inFlight()).isEqualTo(1);
		assertThat(this.store.holders(this.bucket, "k").nextExpiryMicros()).isEqualTo(10 * SECOND);
	}

	@Test
	void anOperatorsReleaseTakesEveryPermitBackAndTheirHoldersAreToldAtTheirNextCall() {
		acquire("k", "h1");
		acquire("k", "h2");
		acquire("other", "h3");
		assertThat(this.store.releaseAll(this.bucket, "k")).isEqualTo(2);
		assertThat(this.store.holders(this.bucket, "k")).isEqualTo(Holders.NONE);
		assertThat(this.store.renew(this.bucket, "k", THREE, "h1")).isFalse();
		assertThat(this.store.release(this.bucket, "k", "h2")).isFalse();
		assertThat(this.store.holders(this.bucket, "other").count()).as("another key").isEqualTo(1);
		assertThat(this.store.releaseAll(this.bucket, "never")).isZero();
	}

	@Test
	void keysAndBucketsAreCountedApartAndALimitChangeAppliesToTheNextRequest() {
		for (int i = 1; i <= 3; i++) {
			acquire("k", "h" + i);
		}
		assertThat(acquire("k2", "x").acquired()).isTrue();
		assertThat(this.store.acquire(this.bucket + "-b", "k", THREE, "y").acquired()).isTrue();
		ConcurrencyLimit five = new ConcurrencyLimit(5, Duration.ofSeconds(10));
		assertThat(this.store.acquire(this.bucket, "k", five, "h4").acquired()).as("raised to 5").isTrue();
		ConcurrencyLimit one = new ConcurrencyLimit(1, Duration.ofSeconds(10));
		ConcurrencyDecision lowered = this.store.acquire(this.bucket, "k", one, "h5");
		assertThat(lowered.acquired()).isFalse();
		assertThat(lowered.inFlight()).isEqualTo(4);
		assertThat(lowered.remaining()).isZero();
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "a:b", "{braces}", "x y", "ключ", "%41", "a\u0000b" })
	void anyKeyIsAKeyOfItsOwn(String key) {
		assertThat(acquire(key, "h1").acquired()).isTrue();
		assertThat(this.store.holders(this.bucket, key).count()).isEqualTo(1);
		assertThat(this.store.holders(this.bucket, key + "!").count()).isZero();
		assertThat(this.store.release(this.bucket, key, "h1")).isTrue();
	}

	@Test
	void aHugeKeyIsAKeyOfItsOwn() {
		String huge = "k".repeat(100_000);
		assertThat(acquire(huge, "h1").acquired()).isTrue();
		assertThat(this.store.holders(this.bucket, huge + "k").count()).isZero();
		assertThat(this.store.holders(this.bucket, huge).count()).isEqualTo(1);
	}

	@Test
	void aNullOrEmptyBucketOrANullKeyIsRefusedNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.acquire(null, "k", THREE, "h"))
			.withMessageContaining("bucket");
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.acquire("", "k", THREE, "h"))
			.withMessageContaining("bucket");
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.acquire(this.bucket, null, THREE, "h"))
			.withMessageContaining("key");
	}

	@Test
	void callsFromManyThreadsNeverHoldMoreThanTheLimit() throws Exception {
		ConcurrencyLimit limit = new ConcurrencyLimit(4, Duration.ofSeconds(30));
		AtomicInteger inFlight = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger acquired = new AtomicInteger();
		ExecutorService threads = Executors.newFixedThreadPool(12);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 12; t++) {
				int thread = t;
				done.add(threads.submit(() -> {
					for (int i = 0; i < 100; i++) {
						String holder = thread + ":" + i;
						if (this.store.acquire(this.bucket, "hot", limit, holder).acquired()) {
							acquired.incrementAndGet();
							most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
							Thread.yield();
							inFlight.decrementAndGet();
							assertThat(this.store.release(this.bucket, "hot", holder)).isTrue();
						}
					}
				}));
			}
			for (Future<?> future : done) {
				future.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(most.get()).isBetween(1, 4);
		assertThat(acquired.get()).isGreaterThan(4);
		assertThat(this.store.holders(this.bucket, "hot")).isEqualTo(Holders.NONE);
	}

	@Test
	void callsOnManyKeysFromManyThreadsAtOnceNeverHoldMoreThanEachKeysLimit() throws Exception {
		ConcurrencyLimit limit = new ConcurrencyLimit(2, Duration.ofSeconds(30));
		int keys = 24;
		AtomicIntegerArray inFlight = new AtomicIntegerArray(keys);
		AtomicIntegerArray most = new AtomicIntegerArray(keys);
		AtomicInteger acquired = new AtomicInteger();
		ExecutorService threads = Executors.newFixedThreadPool(16);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 16; t++) {
				int thread = t;
				done.add(threads.submit(() -> {
					for (int i = 0; i < 150; i++) {
						int key = ThreadLocalRandom.current().nextInt(keys);
						String holder = thread + ":" + i;
						if (this.store.acquire(this.bucket, "user-" + key, limit, holder).acquired()) {
							acquired.incrementAndGet();
							int now = inFlight.incrementAndGet(key);
							most.accumulateAndGet(key, now, Math::max);
							Thread.yield();
							inFlight.decrementAndGet(key);
							assertThat(this.store.release(this.bucket, "user-" + key, holder)).isTrue();
						}
					}
				}));
			}
			for (Future<?> future : done) {
				future.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			threads.shutdownNow();
		}
		for (int key = 0; key < keys; key++) {
			assertThat(most.get(key)).as("the most in flight on user-" + key).isLessThanOrEqualTo(2);
			assertThat(this.store.holders(this.bucket, "user-" + key)).isEqualTo(Holders.NONE);
		}
		assertThat(acquired.get()).isGreaterThan(keys);
	}

	/**
	 * Returns the store under test.
	 * @return the store
	 */
	protected ConcurrencyStore store() {
		return this.store;
	}

	/**
	 * Returns the bucket of the test that runs.
	 * @return the bucket
	 */
	protected String bucket() {
		return this.bucket;
	}

	private ConcurrencyDecision acquire(String key, String holder) {
		return this.store.acquire(this.bucket, key, THREE, holder);
	}

}
