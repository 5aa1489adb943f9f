package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.testsupport.redis.RedisServer;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Concurrent decisions on one key sent together ({@link DecisionCoalescer}) decide
 * exactly as one call per decision would: the same Decision fields on random traces,
 * exactly the limit under many threads in fewer script calls, refunds seen in the middle
 * of a flood, and each request failing on its own, with late permits given back, when
 * Redis stalls or stops under a batch.
 */
class RedisCoalescingTests {

	private static final int STEPS = 2_000;

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static RedisClient client;

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	@BeforeAll
	static void connect() {
		client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
	}

	@AfterAll
	static void disconnect() {
		client.shutdown();
	}

	@AfterEach
	void closeStores() {
		this.stores.forEach(RedisRateLimitStore::close);
		RedisServer server = redis.server();
		server.resume();
		if (!server.isRunning()) {
			server.start();
		}
	}

	private RedisRateLimitStore store(RedisRateLimitStore.Builder builder) {
		RedisRateLimitStore store = builder.connectTimeout(Duration.ofSeconds(30)).build();
		store.start();
		this.stores.add(store);
		return store;
	}

	/**
	 * Two stores on one manual clock and the same history, each in keys of its own: one
	 * decides every batch in one call, the other one call per request, at the same
	 * instant. Histories mix every algorithm, several limits, costs up to
	 * {@code Long.MAX_VALUE}, leaky bucket delay bounds, refunds, resets, peeks and
	 * changes of limits.
	 */
	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 3, 4 })
	void aBatchDecidesAsOneCallPerRequestWould(int seed) {
		decidesAsOneCallPerRequestWould(seed, false);
	}

	/**
	 * As {@link #aBatchDecidesAsOneCallPerRequestWould}, with batches made of runs of
	 * identical requests (the same cost and delay bound), which the script decides as one
	 * where the algorithm allows: runs up to a whole batch long, crossing the limit,
	 * costs above 1 and up to {@code Long.MAX_VALUE}, leaky bucket delay bounds that stop
	 * a run midway.
	 */
	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 3, 4 })
	void runsOfIdenticalRequestsDecideAsOneCallPerRequestWould(int seed) {
		decidesAsOneCallPerRequestWould(seed, true);
	}

	/**
	 * As {@link #runsOfIdenticalRequestsDecideAsOneCallPerRequestWould}, on token bucket,
	 * GCRA and leaky bucket at limits whose emission interval is no whole number of
	 * microseconds (RedisDifferentialTests#randomBucket): a run taken at once adds a
	 * fraction of a microsecond per request.
	 */
	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 3, 4 })
	void runsOfIdenticalRequestsOnBucketsAtEveryScaleDecideAsOneCallPerRequestWould(int seed) {
		decidesAsOneCallPerRequestWould(seed, true, true);
	}

	private void decidesAsOneCallPerRequestWould(int seed, boolean runs) {
		decidesAsOneCallPerRequestWould(seed, runs, false);
	}

	private void decidesAsOneCallPerRequestWould(int seed, boolean runs, boolean buckets) {
		// Batches of runs are several times longer: fewer of them decide as many
		// requests.
		int steps = runs ? STEPS / 4 : STEPS;
		ManualTimeSource time = new ManualTimeSource(1_800_000_000_000_000L);
		RedisRateLimitStore batched = store(onClock(time).keyPrefix("batched"));
		// One script call per request, sent without waiting for the one before (Redis
		// runs them one after another, in the order sent): not coalesced, so not
		// batched.
		RedisRateLimitStore single = store(onClock(time).keyPrefix("single").coalescing(false));
		Random random = new Random(seed);
		// A bucket of its own per test and seed: the three tests of a seed shared keys,
		// and a later one found the earlier one's states, written at other real
		// instants (their TTL decides whether a backlog above a lowered capacity is
		// kept), so its two stores could start apart (seed 3, 1 run in about 12).
		String bucket = "diff-" + seed + (runs ? "-runs" : "") + (buckets ? "-buckets" : "");
		String[] keys = { "a", "b" };
		List<List<LimitSpec>> limits = new ArrayList<>();
		for (int k = 0; k < keys.length; k++) {
			limits.add(List
				.of(buckets ? RedisDifferentialTests.randomBucket(random) : RedisDifferentialTests.randomSpec(random)));
		}
		int allowed = 0;
		int rejected = 0;
		int crossing = 0;
		for (int step = 0; step < steps; step++) {
			int k = random.nextInt(keys.length);
			String key = keys[k];
			List<LimitSpec> specs = limits.get(k);
			if (buckets) {
				RedisDifferentialTests.advanceBucket(time, random, specs.get(0));
			}
			else {
				RedisDifferentialTests.advance(time, random, specs.get(0));
			}
			int op = random.nextInt(100);
			if (op < 8) {
				List<LimitSpec> changed = buckets ? RedisDifferentialTests.changedBucket(random, specs)
						: RedisDifferentialTests.changed(random, specs);
				if (buckets && single.peek(bucket, key, specs).resetAfterMicros() > capacityMicros(changed.get(0))) {
					// A backlog above the new capacity is cut, or kept, by Redis's own
					// clock (bucket.lua reads the key's PTTL), which this test's manual
					// clock does not drive: the two stores wrote the key at different
					// real instants, and on a loaded machine decided it apart (seed 2,
					// step 289, in 3 of 5 builds). RedisClockSkewTests covers that case;
					// here both start the new limit from an empty key.
					batched.reset(bucket, key, specs);
					single.reset(bucket, key, specs);
				}
				limits.set(k, changed);
			}
			else if (op < 14) {
				long cost = cost(random, specs.get(0), buckets);
				batched.refund(bucket, key, specs, cost);
				single.refund(bucket, key, specs, cost);
			}
			else if (op < 15) {
				batched.reset(bucket, key, specs);
				single.reset(bucket, key, specs);
			}
			else if (op < 18) {
				// A settlement beyond its reservation, into debt when the limit has less
				// left.
				long permits = Math.min(cost(random, specs.get(0), buckets), Long.MAX_VALUE / 4)
						* (1 + random.nextInt(4));
				batched.owe(bucket, key, specs, permits);
				single.owe(bucket, key, specs, permits);
			}
			else {
				int size = runs ? ((random.nextInt(3) == 0) ? DecisionCoalescer.MAX_BATCH : 2 + random.nextInt(40))
						: ((random.nextInt(10) == 0) ? DecisionCoalescer.MAX_BATCH : 2 + random.nextInt(8));
				long[] costs = new long[size];
				long[] maxDelays = new long[size];
				if (runs) {
					for (int i = 0; i < size;) {
						int run = 1 + random.nextInt(size - i);
						long cost = cost(random, specs.get(0), buckets);
						long maxDelay = switch (random.nextInt(3)) {
							case 0 -> RateLimitStore.NO_MAX_DELAY;
							case 1 -> random.nextInt(3_000_000);
							default -> (long) (random.nextDouble() * specs.get(0).windowMicros());
						};
						Arrays.fill(costs, i, i + run, cost);
						Arrays.fill(maxDelays, i, i + run, maxDelay);
						i += run;
					}
				}
				else {
					for (int i = 0; i < size; i++) {
						costs[i] = cost(random, specs.get(0), buckets);
						maxDelays[i] = (random.nextInt(3) == 0) ? random.nextInt(3_000_000)
								: RateLimitStore.NO_MAX_DELAY;
					}
				}
				List<Decision> together = batched.decideBatch(bucket, key, specs, costs, maxDelays);
				List<CompletableFuture<Decision>> singles = new ArrayList<>(size);
				for (int i = 0; i < size; i++) {
					singles.add(single.decideAsync(bucket, key, specs, costs[i], maxDelays[i]).toCompletableFuture());
				}
				for (int i = 0; i < size; i++) {
					Decision alone = singles.get(i).join();
					RedisDifferentialTests.assertSame(alone, together.get(i), "seed " + seed + ", step " + step
							+ ", request " + i + " of " + size + ", " + specs + ", cost " + costs[i]);
					if (alone.allowed()) {
						allowed++;
					}
					else {
						rejected++;
						if (i > 0 && together.get(i - 1).allowed() && costs[i - 1] == costs[i]
								&& maxDelays[i - 1] == maxDelays[i]) {
							crossing++;
						}
					}
				}
				if (step % 5 == 0) {
					// A state that differs also shows in later decisions: a sample
					// suffices.
					assertSameState(bucket, key, specs, "seed " + seed + ", step " + step);
				}
			}
		}
		assertThat(allowed).as("allowed decisions").isGreaterThan(steps / 5);
		assertThat(rejected).as("rejected decisions").isGreaterThan(steps / 5);
		if (runs) {
			assertThat(crossing).as("runs of identical requests crossing the limit").isGreaterThan(steps / 20);
		}
	}

	private static long cost(Random random, LimitSpec spec, boolean buckets) {
		return buckets ? RedisDifferentialTests.bucketCost(random, spec) : RedisDifferentialTests.cost(random, spec);
	}

	/**
	 * The keys a batch leaves are those the single calls leave: a batch writes its token
	 * bucket, GCRA and leaky bucket states once, after its last decision.
	 */
	private static void assertSameState(String bucket, String key, List<LimitSpec> specs, String context) {
		String[] batchedKeys = new RedisKeys("batched").keys(bucket, key, specs);
		String[] singleKeys = new RedisKeys("single").keys(bucket, key, specs);
		for (int i = 0; i < specs.size(); i++) {
			String type = redis.server().command("TYPE", singleKeys[i]);
			assertThat(redis.server().command("TYPE", batchedKeys[i])).as(context).isEqualTo(type);
			if (type.trim().equals("string")) {
				assertThat(redis.server().command("GET", batchedKeys[i])).as(context)
					.isEqualTo(redis.server().command("GET", singleKeys[i]));
			}
		}
	}

	/** The time a bucket takes to fill from empty: its burst at its rate. */
	private static double capacityMicros(LimitSpec spec) {
		return (double) spec.burst() * spec.windowMicros() / spec.limit();
	}

	private static RedisRateLimitStore.Builder onClock(ManualTimeSource time) {
		// The manual clock runs far ahead of Redis's: keys must outlive their real-time
		// TTL.
		return RedisRateLimitStore.builder(client)
			.timeSource(time)
			.expirySlack(Duration.ofHours(6))
			.timeout(Duration.ofSeconds(5));
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void manyThreadsOnOneKeyAdmitExactlyTheLimitInFewerCalls(Algorithm algorithm) throws Exception {
		manyThreadsOnOneKey(RedisRateLimitStore.builder(client), algorithm);
	}

	@Test
	void manyThreadsOnOneKeyThroughJedisAdmitExactlyTheLimitInFewerCalls() throws Exception {
		JedisConnectionFactory jedis = new JedisConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()),
				JedisClientConfiguration.builder().usePooling().build());
		manyThreadsOnOneKey(RedisRateLimitStore.builderFor(jedis), Algorithm.SLIDING_WINDOW_COUNTER);
	}

	private void manyThreadsOnOneKey(RedisRateLimitStore.Builder builder, Algorithm algorithm) throws Exception {
		RedisRateLimitStore store = store(
				builder.keyPrefix("threads-" + System.nanoTime()).timeout(Duration.ofSeconds(5)));
		List<LimitSpec> limits = List.of(LimitSpec.builder().limit(300).window("1d").algorithm(algorithm).build());
		int threads = 16;
		int perThread = 50;
		long callsBefore = scriptCalls();
		AtomicInteger admitted = new AtomicInteger();
		runConcurrently(threads, () -> {
			for (int i = 0; i < perThread; i++) {
				Decision decision = (i % 2 == 0) ? store.decide("hot", "k", limits, 1)
						: store.decideAsync("hot", "k", limits, 1, RateLimitStore.NO_MAX_DELAY)
							.toCompletableFuture()
							.get(30, TimeUnit.SECONDS);
				if (decision.allowed()) {
					admitted.incrementAndGet();
				}
			}
		});
		long calls = scriptCalls() - callsBefore;
		assertThat(admitted.get()).isEqualTo(300);
		assertThat(calls).as("script calls for %d decisions", threads * perThread).isLessThan(threads * perThread);
		assertThat(store.coalescedDecisions()).isPositive();
	}

	/**
	 * Callers that decide again as soon as they are answered (a pipeline, a closed loop)
	 * go in one call per round once the first call returned: the lane sends again after
	 * its callers ran. Sending the requests that had waited before them split the callers
	 * into two groups taking turns, two calls a round.
	 */
	@Test
	void callersThatDecideAgainAtOnceGoInOneCallPerRound() throws Exception {
		RedisRateLimitStore store = store(RedisRateLimitStore.builder(client)
			.keyPrefix("loop-" + System.nanoTime())
			.timeout(Duration.ofSeconds(5)));
		List<LimitSpec> limits = List.of(LimitSpec.of(100_000, Duration.ofDays(100), Algorithm.TOKEN_BUCKET));
		// One permit back every 86 s: none in the test, so the count is exact.
		int callers = 64;
		int rounds = 40;
		// The same load once on keys of their own first: run first in a fresh JVM, the
		// test thread took long enough to start 64 cold callers that their first rounds
		// went in 21 extra calls (61 for 40 rounds), start-up rather than the steady
		// state asserted.
		RedisRateLimitStore warmUp = store(RedisRateLimitStore.builder(client)
			.keyPrefix("loop-warm-up-" + System.nanoTime())
			.timeout(Duration.ofSeconds(5)));
		for (CompletableFuture<Long> loop : startLoops(warmUp, limits, callers, rounds)) {
			loop.get(60, TimeUnit.SECONDS);
		}
		long callsBefore = scriptCalls();
		long allowed = 0;
		for (CompletableFuture<Long> loop : startLoops(store, limits, callers, rounds)) {
			allowed += loop.get(60, TimeUnit.SECONDS);
		}
		long onTheServer = scriptCalls() - callsBefore;
		long calls = store.coalescedCalls();
		assertThat(allowed).isEqualTo((long) callers * rounds);
		assertThat(store.peek("hot", "k", limits).remaining()).isEqualTo(100_000 - (long) callers * rounds);
		// Callers that decide again at once share calls: a call a round when every
		// caller runs before the next call goes, which is the scheduler's to decide.
		// Class runs stay within 50 calls for 40 rounds, but full builds on 2 busy cores
		// counted 53 of this store's own (and 61 and 64 on the server), callers left
		// behind missing their round's call; DecisionCoalescerTests shows the batching
		// deterministically. Here: at least 16 decisions a call on average, which a
		// lane that stopped batching (2,560 calls) fails.
		assertThat(calls)
			.as("script calls for %d rounds of %d callers (%d on the server meanwhile)", rounds, callers, onTheServer)
			.isLessThanOrEqualTo(4L * rounds);
		System.out.printf("RedisCoalescingTests: %d calls for %d rounds of %d callers%n", calls, rounds, callers);
		assertThat(onTheServer).as("calls on the server meanwhile").isGreaterThanOrEqualTo(calls);
	}

	private static List<CompletableFuture<Long>> startLoops(RedisRateLimitStore store, List<LimitSpec> limits,
			int callers, int rounds) {
		// All at once: started one after another, callers that the test thread started
		// after the first call's reply (the thread descheduled for a few ms on a busy
		// machine) ran their rounds behind the others, a call more for each round they
		// trailed: 56 to 70 calls for 40 rounds in 3 of 9 runs, on this version and the
		// one before. Released together, the first decision goes alone and the other
		// callers wait for it: every later round is one call (6 of 6 runs within 50).
		CompletableFuture<Void> go = new CompletableFuture<>();
		List<CompletableFuture<Long>> loops = new ArrayList<>();
		for (int i = 0; i < callers; i++) {
			loops.add(go.thenCompose((ready) -> decideInLoop(store, limits, rounds)));
		}
		go.complete(null);
		return loops;
	}

	/**
	 * Decides {@code left} times, each decision made in the completion of the one before.
	 * @return how many were allowed
	 */
	private static CompletableFuture<Long> decideInLoop(RedisRateLimitStore store, List<LimitSpec> limits, int left) {
		if (left == 0) {
			return CompletableFuture.completedFuture(0L);
		}
		return store.decideAsync("hot", "k", limits, 1, RateLimitStore.NO_MAX_DELAY)
			.toCompletableFuture()
			.thenCompose((decision) -> decideInLoop(store, limits, left - 1)
				.thenApply((allowed) -> allowed + (decision.allowed() ? 1 : 0)));
	}

	@Test
	void refundsInTheMiddleOfAFloodAreSeenExactly() throws Exception {
		RedisRateLimitStore store = store(RedisRateLimitStore.builder(client).timeout(Duration.ofSeconds(5)));
		List<LimitSpec> limits = List.of(LimitSpec.of(50, Duration.ofDays(1), Algorithm.SLIDING_LOG));
		AtomicInteger admitted = new AtomicInteger();
		AtomicInteger refunded = new AtomicInteger();
		runConcurrently(8, () -> {
			for (int i = 0; i < 200; i++) {
				if (store.decide("flood", "k", limits, 1).allowed()) {
					admitted.incrementAndGet();
					// Every fifth admitted request gives its permit back, while the
					// others flood.
					if (admitted.get() % 5 == 0 && refunded.incrementAndGet() <= 20) {
						store.refund("flood", "k", limits, 1);
					}
				}
			}
		});
		int refunds = Math.min(20, refunded.get());
		// A permit given back by a thread's last request is taken here.
		while (store.decide("flood", "k", limits, 1).allowed()) {
			admitted.incrementAndGet();
		}
		// Every permit is taken: what was admitted is the limit plus what came back.
		assertThat(store.peek("flood", "k", limits).remaining()).isZero();
		assertThat(admitted.get()).isEqualTo(50 + refunds);
		assertThat(store.coalescedDecisions()).isPositive();
		store.reset("flood", "k", limits);
		assertThat(store.decide("flood", "k", limits, 1).remaining()).as("seen after the flood").isEqualTo(49);
	}

	@Test
	void aBatchLoadsTheScriptAgainAfterScriptFlush() {
		RedisRateLimitStore store = store(RedisRateLimitStore.builder(client).timeout(Duration.ofSeconds(5)));
		List<LimitSpec> limits = List.of(LimitSpec.of(5, Duration.ofDays(1), Algorithm.GCRA));
		redis.server().command("SCRIPT", "FLUSH");
		List<Decision> decisions = store.decideBatch("flush", "k", limits, new long[] { 2, 4, 3 },
				new long[] { RateLimitStore.NO_MAX_DELAY, RateLimitStore.NO_MAX_DELAY, RateLimitStore.NO_MAX_DELAY });
		assertThat(decisions).extracting(Decision::allowed).containsExactly(true, false, true);
		assertThat(decisions).extracting(Decision::remaining).containsExactly(3L, 3L, 0L);
	}

	@Test
	void aPausedRedisFailsEachQueuedRequestAndLatePermitsGoBack() throws Exception {
		RedisRateLimitStore store = store(RedisRateLimitStore.builder(client).timeout(Duration.ofMillis(100)));
		List<LimitSpec> limits = List.of(LimitSpec.of(1000, Duration.ofDays(1), Algorithm.TOKEN_BUCKET));
		assertThat(store.decide("pause", "k", limits, 1).allowed()).isTrue();
		store.refund("pause", "k", limits, 1);
		List<CompletableFuture<Decision>> decisions = new ArrayList<>();
		redis.server().pause();
		try {
			for (int i = 0; i < 200; i++) {
				decisions
					.add(store.decideAsync("pause", "k", limits, 1, RateLimitStore.NO_MAX_DELAY).toCompletableFuture());
			}
			for (CompletableFuture<Decision> decision : decisions) {
				assertThat(decision).failsWithin(Duration.ofSeconds(30))
					.withThrowableOfType(java.util.concurrent.ExecutionException.class)
					.havingCause()
					.isInstanceOfSatisfying(RateLimitStoreException.class, (ex) -> assertThat(ex.isTimeout()).isTrue());
			}
		}
		finally {
			redis.server().resume();
		}
		// The sent calls run once Redis wakes up; every permit they took comes back.
		await(() -> store.lateRefunds() > 0 && store.peek("pause", "k", limits).remaining() == 1000,
				"every late permit given back");
		assertThat(store.coalescedDecisions()).isPositive();
		assertThat(store.decide("pause", "k", limits, 1).remaining()).isEqualTo(999);
	}

	@Test
	void aStoppedRedisFailsEachQueuedRequestAndTakesNothing() throws Exception {
		RedisRateLimitStore store = store(RedisRateLimitStore.builder(client).timeout(Duration.ofMillis(100)));
		List<LimitSpec> limits = List.of(LimitSpec.of(10, Duration.ofDays(1), Algorithm.FIXED_WINDOW));
		assertThat(store.decide("down", "k", limits, 1).allowed()).isTrue();
		redis.server().stop();
		List<CompletableFuture<Decision>> decisions = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			decisions.add(store.decideAsync("down", "k", limits, 1, RateLimitStore.NO_MAX_DELAY).toCompletableFuture());
		}
		for (CompletableFuture<Decision> decision : decisions) {
			assertThat(decision).failsWithin(Duration.ofSeconds(30))
				.withThrowableOfType(java.util.concurrent.ExecutionException.class)
				.havingCause()
				.isInstanceOf(RateLimitStoreException.class);
		}
		redis.server().start();
		// The restarted Redis is empty: none of the failed requests ran.
		await(() -> {
			try {
				return store.peek("down", "k", limits).remaining() == 10;
			}
			catch (RateLimitStoreException ex) {
				return false;
			}
		}, "Redis back");
	}

	private interface Task {

		void run() throws Exception;

	}

	private static void runConcurrently(int threads, Task task) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				futures.add(pool.submit(() -> {
					start.await();
					task.run();
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	private static long scriptCalls() {
		long calls = 0;
		Matcher matcher = Pattern.compile("cmdstat_(?:evalsha|eval):calls=(\\d+)")
			.matcher(redis.server().command("INFO", "commandstats"));
		while (matcher.find()) {
			calls += Long.parseLong(matcher.group(1));
		}
		return calls;
	}

	private static void await(BooleanSupplier condition, String what) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				fail("Not within 30s: " + what);
			}
			Thread.sleep(20);
		}
	}

}
