package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.testsupport.redis.RedisServer;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@link RedisRateLimitStore} against a Redis the test stalls, flushes, stops and
 * restarts: scripts come back after {@code NOSCRIPT}, no call waits longer than the
 * timeout, and the data layout (hash tags, TTLs, bounded key names) holds. On Lettuce
 * here; subclasses run the same tests on another client through {@link #builder()}.
 */
class RedisRateLimitStoreFaultTests {

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	/** Scheduling noise on a busy 2-core machine, not Redis time. */
	private static final long MARGIN_MILLIS = 400;

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static RedisClient client;

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	private final List<RedisClient> clients = new ArrayList<>();

	@BeforeAll
	static void connect() {
		client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
	}

	@AfterAll
	static void disconnect() {
		client.shutdown();
	}

	/**
	 * Returns a builder on the client under test.
	 * @return a builder
	 */
	protected RedisRateLimitStore.Builder builder() {
		return RedisRateLimitStore.builder(client);
	}

	/**
	 * Returns a builder as another application instance would make it, on a client of its
	 * own.
	 * @return a builder
	 */
	protected RedisRateLimitStore.Builder anotherInstanceBuilder() {
		RedisClient anotherClient = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		this.clients.add(anotherClient);
		return RedisRateLimitStore.builder(anotherClient);
	}

	@AfterEach
	void closeStores() {
		this.stores.forEach(RedisRateLimitStore::close);
		this.clients.forEach(RedisClient::shutdown);
		RedisServer server = redis.server();
		if (!server.isRunning()) {
			server.start();
		}
	}

	private RedisRateLimitStore store(Duration timeout) {
		return store(timeout, "fault");
	}

	private RedisRateLimitStore store(Duration timeout, String prefix) {
		RedisRateLimitStore store = builder().keyPrefix(prefix).timeout(timeout).build();
		store.start(Duration.ofSeconds(5));
		this.stores.add(store);
		return store;
	}

	private static List<LimitSpec> limit(long limit, Algorithm algorithm) {
		return List.of(LimitSpec.builder().limit(limit).window(Duration.ofHours(1)).algorithm(algorithm).build());
	}

	@Test
	void scriptIsLoadedAgainAfterScriptFlush() {
		RedisRateLimitStore store = store(Duration.ofSeconds(2));
		List<LimitSpec> limits = limit(5, Algorithm.SLIDING_LOG);
		assertThat(store.decide("flush", "k", limits, 2).remaining()).isEqualTo(3);
		String sha = RedisRateLimitScript.load().sha1();
		assertThat(redis.server().command("SCRIPT", "EXISTS", sha)).contains("1");
		redis.server().command("SCRIPT", "FLUSH");
		assertThat(redis.server().command("SCRIPT", "EXISTS", sha)).contains("0");
		assertThat(store.decide("flush", "k", limits, 1).remaining()).as("state kept, script reloaded").isEqualTo(2);
		assertThat(redis.server().command("SCRIPT", "EXISTS", sha)).contains("1");
	}

	@Test
	void scriptIsLoadedAgainAfterARedisRestart() {
		RedisRateLimitStore store = store(Duration.ofSeconds(2));
		List<LimitSpec> limits = limit(5, Algorithm.TOKEN_BUCKET);
		assertThat(store.decide("restart", "k", limits, 5).allowed()).isTrue();
		assertThat(store.decide("restart", "k", limits, 1).allowed()).isFalse();
		redis.server().restart();
		Decision after = awaitDecision(store, "restart", "k", limits);
		assertThat(after.allowed()).as("a restarted Redis without persistence starts empty").isTrue();
		assertThat(after.remaining()).isEqualTo(4);
	}

	@Test
	void aStalledRedisGivesATimeoutWithinTheConfiguredTimeout() throws Exception {
		RedisRateLimitStore store = store(TIMEOUT);
		List<LimitSpec> limits = limit(5, Algorithm.GCRA);
		assertThat(store.decide("stall", "k", limits, 1).allowed()).isTrue();
		CompletableFuture<String> sleep = CompletableFuture
			.supplyAsync(() -> redis.server().command("DEBUG", "SLEEP", "2"));
		Thread.sleep(100);
		for (int i = 0; i < 3; i++) {
			long started = System.nanoTime();
			assertThatExceptionOfType(RateLimitStoreException.class)
				.isThrownBy(() -> store.decide("stall", "k", limits, 1))
				.satisfies((ex) -> assertThat(ex.isTimeout()).isTrue())
				.withMessageContaining("100ms");
			long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
			assertThat(elapsedMillis).isBetween(TIMEOUT.toMillis() - 5, TIMEOUT.toMillis() + MARGIN_MILLIS);
		}
		sleep.get(10, TimeUnit.SECONDS);
		assertThat(awaitDecision(store, "stall", "k", limits).allowed()).isTrue();
	}

	@Test
	void aPausedRedisTimesOutAsynchronouslyToo() throws Exception {
		RedisRateLimitStore store = store(TIMEOUT);
		List<LimitSpec> limits = limit(5, Algorithm.FIXED_WINDOW);
		assertThat(store.decide("pause", "k", limits, 1).allowed()).isTrue();
		redis.server().pause();
		try {
			long started = System.nanoTime();
			CompletableFuture<Decision> decision = store.decideAsync("pause", "k", limits, 1, Long.MAX_VALUE)
				.toCompletableFuture();
			assertThat(decision).failsWithin(Duration.ofMillis(TIMEOUT.toMillis() + MARGIN_MILLIS))
				.withThrowableOfType(java.util.concurrent.ExecutionException.class)
				.havingCause()
				.isInstanceOf(RateLimitStoreException.class);
			assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
				.isLessThan(TIMEOUT.toMillis() + MARGIN_MILLIS);
		}
		finally {
			redis.server().resume();
		}
	}

	@Test
	void anUnreachableRedisFailsWithinTheTimeoutAndCallsMadeMeanwhileTakeNothing() {
		RedisRateLimitStore store = store(TIMEOUT);
		List<LimitSpec> limits = limit(3, Algorithm.SLIDING_WINDOW_COUNTER);
		assertThat(store.decide("down", "k", limits, 1).allowed()).isTrue();
		redis.server().stop();
		for (int i = 0; i < 5; i++) {
			long started = System.nanoTime();
			assertThatExceptionOfType(RateLimitStoreException.class)
				.isThrownBy(() -> store.decide("down", "k", limits, 1));
			assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
				.isLessThan(TIMEOUT.toMillis() + MARGIN_MILLIS);
		}
		redis.server().start();
		// The restarted Redis is empty; the five failed calls, cancelled, must not have
		// run.
		Decision after = awaitDecision(store, "down", "k", limits);
		assertThat(after.remaining()).isEqualTo(2);
	}

	@Test
	void aStoreCreatedWhileRedisIsDownWorksOnceRedisIsBack() {
		redis.server().stop();
		RedisRateLimitStore store = builder().keyPrefix("late").timeout(TIMEOUT).build();
		this.stores.add(store);
		store.start(Duration.ofMillis(300));
		assertThatExceptionOfType(RateLimitStoreException.class)
			.isThrownBy(() -> store.decide("late", "k", limit(3, Algorithm.GCRA), 1));
		redis.server().start();
		assertThat(awaitDecision(store, "late", "k", limit(3, Algorithm.GCRA)).remaining()).isEqualTo(2);
	}

	@Test
	void everyKeyCarriesTheHashTagAndATtlNoLongerThanItNeeds() {
		RedisRateLimitStore store = store(Duration.ofSeconds(2), "layout");
		for (Algorithm algorithm : Algorithm.values()) {
			List<LimitSpec> limits = List.of(LimitSpec.builder().limit(10).window("10s").algorithm(algorithm).build());
			assertThat(store.decide("layout", "user:42", limits, 3).allowed()).isTrue();
		}
		String[] keys = redis.server().command("KEYS", "layout:*").trim().split("\\s+");
		assertThat(keys).hasSize(Algorithm.values().length);
		for (String key : keys) {
			assertThat(key).startsWith("layout:{layout:user%3A42}:");
			long ttl = Long.parseLong(redis.server().command("PTTL", key).trim());
			// Window algorithms keep state one window (sliding window: two), buckets
			// until refilled (3s).
			long needed = key.contains("}:sw0") ? 20_000 : (key.matches(".*}:(tb|gcra|lb)0") ? 3_000 : 10_000);
			assertThat(ttl).as("PTTL of %s", key).isPositive().isLessThanOrEqualTo(needed);
		}
	}

	@Test
	void leakyBucketDelayIsBoundedOnRedisTime() {
		// Redis time, and the bound as the only optional argument the script gets.
		RedisRateLimitStore store = store(Duration.ofSeconds(2));
		List<LimitSpec> limits = List
			.of(LimitSpec.builder().limit(6).window("1m").algorithm(Algorithm.LEAKY_BUCKET).build());
		long bound = TimeUnit.SECONDS.toMicros(15);
		assertThat(store.decide("shape", "k", limits, 1, bound).delayMicros()).isZero();
		assertThat(store.decide("shape", "k", limits, 1, bound).delayMicros()).isBetween(5_000_000L, 10_000_000L);
		Decision third = store.decide("shape", "k", limits, 1, bound);
		assertThat(third.allowed()).as("a 20s delay is over the 15s bound").isFalse();
		assertThat(third.retryAfterMicros()).isBetween(1L, 5_000_000L);
		assertThat(store.decide("shape", "k", limits, 1).delayMicros()).as("unbounded").isGreaterThan(15_000_000L);
	}

	@Test
	void hugeAndBraceFilledKeysWorkAndAreStoredBounded() {
		RedisRateLimitStore store = store(Duration.ofSeconds(2));
		List<LimitSpec> limits = limit(2, Algorithm.FIXED_WINDOW);
		String huge = "k".repeat(10_000);
		String braces = "{}{{}}}{".repeat(20);
		for (String key : List.of(huge, braces, "{", "}")) {
			assertThat(store.decide("odd", key, limits, 2).allowed()).isTrue();
			assertThat(store.decide("odd", key, limits, 1).allowed()).isFalse();
		}
		String[] keys = redis.server().command("KEYS", "fault:{odd:*").trim().split("\\s+");
		assertThat(keys).hasSize(4);
		for (String key : keys) {
			assertThat(key.length()).isLessThan(200);
			assertThat(key.chars().filter((c) -> c == '{').count()).isEqualTo(1);
			assertThat(key.chars().filter((c) -> c == '}').count()).isEqualTo(1);
		}
	}

	@Test
	void eightThreadsOnEachOfTwoStoresAdmitExactlyTheLimit() throws Exception {
		RedisRateLimitStore second = anotherInstanceBuilder().keyPrefix("fault").timeout(Duration.ofSeconds(5)).build();
		this.stores.add(second);
		RedisRateLimitStore first = store(Duration.ofSeconds(5));
		for (Algorithm algorithm : Algorithm.values()) {
			List<LimitSpec> limits = limit(50, algorithm);
			assertThat(hammer(List.of(first, second), algorithm.name(), limits)).as(algorithm.name()).isEqualTo(50);
		}
	}

	@Test
	void twoStoresSharingAManualClockAdmitExactlyTheLimitForEveryAlgorithm() throws Exception {
		ManualTimeSource time = new ManualTimeSource(1_800_000_000_000_000L);
		RedisRateLimitStore first = builder().keyPrefix("fault")
			.timeSource(time)
			.expirySlack(Duration.ofMinutes(10))
			.timeout(Duration.ofSeconds(5))
			.build();
		RedisRateLimitStore second = builder().keyPrefix("fault")
			.timeSource(time)
			.expirySlack(Duration.ofMinutes(10))
			.timeout(Duration.ofSeconds(5))
			.build();
		this.stores.add(first);
		this.stores.add(second);
		for (Algorithm algorithm : Algorithm.values()) {
			List<LimitSpec> limits = List.of(LimitSpec.builder().limit(50).window("1m").algorithm(algorithm).build());
			assertThat(hammer(List.of(first, second), "manual-" + algorithm, limits)).as(algorithm.name())
				.isEqualTo(50);
		}
	}

	private static long hammer(List<RedisRateLimitStore> stores, String bucket, List<LimitSpec> limits)
			throws Exception {
		int threadsPerStore = 8;
		AtomicInteger admitted = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(threadsPerStore * stores.size());
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (RedisRateLimitStore store : stores) {
				for (int t = 0; t < threadsPerStore; t++) {
					futures.add(pool.submit(() -> {
						start.await();
						for (int i = 0; i < 10; i++) {
							if (store.decide(bucket, "hot", limits, 1).allowed()) {
								admitted.incrementAndGet();
							}
						}
						return null;
					}));
				}
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		return admitted.get();
	}

	private static Decision awaitDecision(RedisRateLimitStore store, String bucket, String key,
			List<LimitSpec> limits) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		RateLimitStoreException last = null;
		while (System.nanoTime() < deadline) {
			try {
				return store.decide(bucket, key, limits, 1);
			}
			catch (RateLimitStoreException ex) {
				last = ex;
				sleep(50);
			}
		}
		return fail("Redis did not come back within 15s", last);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
