package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.RateAndConcurrencyStoreContractTests;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The concurrency contract suite against {@link RedisRateLimitStore} on a standalone
 * Redis, with the suite's clock passed to the script.
 */
class RedisConcurrencyStoreTests extends RateAndConcurrencyStoreContractTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final AtomicInteger repetitions = new AtomicInteger();

	private static RedisClient client;

	private static SharedConcurrencyStore shared;

	@BeforeAll
	static void connect() {
		client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		shared = new SharedConcurrencyStore(() -> RedisRateLimitStore.builder(client));
	}

	@AfterAll
	static void disconnect() {
		shared.close();
		client.shutdown();
	}

	@Override
	protected ConcurrencyStore createStore(ManualTimeSource time) {
		return shared.on(time);
	}

	/**
	 * A random trace of operations on three keys, some of whose leases just ended: in one
	 * batch call, each operation replies as a call of its own at the same instant does.
	 */
	@RepeatedTest(5)
	void aBatchRunsEachOperationAsACallOfItsOwnAtThatInstantWould() {
		ConcurrencyStore store = shared.on(this.time);
		RedisRateLimitStore redisStore = shared.store();
		long seed = System.nanoTime();
		Random random = new Random(seed);
		String[] codes = { "a", "a", "a", "r", "r", "n", "h", "x" };
		List<ConcurrencyCoalescer.Operation> trace = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			String cc = codes[random.nextInt(codes.length)];
			boolean holds = cc.equals("a") || cc.equals("n") || cc.equals("r");
			trace.add(new ConcurrencyCoalescer.Operation(cc, "k" + random.nextInt(3),
					holds ? "h" + random.nextInt(6) : "", cc.equals("a") ? 1 + random.nextInt(3) : 0,
					cc.equals("a") || cc.equals("n") ? 10_000_000 : 0));
		}
		String alone = "alone" + repetitions.incrementAndGet();
		String batched = "batched" + repetitions.get();
		for (String bucket : List.of(alone, batched)) {
			for (int key = 0; key < 3; key++) {
				// Leases that end at the trace's instant: the first operation on each key
				// finds them expired.
				store.acquire(bucket, "k" + key, THREE, "old" + key);
			}
		}
		this.time.advance(Duration.ofSeconds(10));
		List<Object> replies = new ArrayList<>();
		for (ConcurrencyCoalescer.Operation operation : trace) {
			replies.add(redisStore.concurrencyBatch(List.of(on(alone, operation))));
		}
		assertThat(redisStore.concurrencyBatch(trace.stream().map((operation) -> on(batched, operation)).toList()))
			.as("the trace of seed " + seed)
			.isEqualTo(replies);
		for (int key = 0; key < 3; key++) {
			assertThat(store.holders(batched, "k" + key)).isEqualTo(store.holders(alone, "k" + key));
		}
	}

	private static ConcurrencyCoalescer.Operation on(String bucket, ConcurrencyCoalescer.Operation operation) {
		return new ConcurrencyCoalescer.Operation(operation.cc(), "rl:{" + bucket + ":" + operation.redisKey() + "}:cc",
				operation.holder(), operation.permits(), operation.leaseMicros());
	}

	@Test
	void callersOnManyKeysAtOnceShareScriptCallsOnOneRedis() throws Exception {
		ConcurrencyStore store = shared.on(this.time);
		long coalescedBefore = shared.store().coalescedConcurrencyOperations();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(16);
		try {
			List<Future<Boolean>> released = new ArrayList<>();
			for (int t = 0; t < 16; t++) {
				String key = "tenant-" + t;
				released.add(threads.submit(() -> {
					start.await();
					boolean all = true;
					for (int i = 0; i < 50; i++) {
						all &= store.acquire("many", key, THREE, key + ":" + i).acquired()
								&& store.release("many", key, key + ":" + i);
					}
					return all;
				}));
			}
			start.countDown();
			for (Future<Boolean> done : released) {
				assertThat(done.get(2, TimeUnit.MINUTES)).isTrue();
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(shared.store().coalescedConcurrencyOperations() - coalescedBefore)
			.as("of 1,600 operations by 16 threads on 16 keys, some went in a call with others")
			.isPositive();
	}

	@Test
	void thePermitsOfAKeyAreOneSortedSetInItsSlotThatExpiresWithItsLatestLease() {
		ConcurrencyStore store = shared.on(this.time);
		store.acquire("slots", "k", THREE, "h1");
		assertThat(redis.server().command("TYPE", "rl:{slots:k}:cc")).contains("zset");
		assertThat(redis.server().command("ZRANGE", "rl:{slots:k}:cc", "0", "-1")).contains("h1");
		long ttl = Long.parseLong(redis.server().command("PTTL", "rl:{slots:k}:cc").trim());
		assertThat(ttl).as("the lease, 10 s, and the suite's 10 minutes of slack").isBetween(600_000L, 610_000L);
		store.release("slots", "k", "h1");
		assertThat(redis.server().command("EXISTS", "rl:{slots:k}:cc")).contains("0");
		assertThat(new ConcurrencyLimit(1, Duration.ofMillis(1001)).leaseMicros()).isEqualTo(1_001_000);
	}

}
