package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.redis.RedisRateLimitStore;

/**
 * The Redis store's two ways to Redis side by side, same Redis, same run, alternating
 * trials, one hot key ({@code redis-client-paths}): the Lettuce path against the Spring
 * Data Redis path on Jedis. Variants: {@code sync-c16} and {@code sync-c64}, that many
 * threads each calling {@code decide} (a servlet application's callers), and
 * {@code async-c64}, 64 {@code decideAsync} calls in flight (a reactive one's).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RedisClientPaths {

	private static final String COMPARISON = "redis-client-paths";

	private static final List<LimitSpec> HOT = List.of(RedisComparison.HOT_LIMIT);

	private final Options options;

	private final int port;

	private RedisClientPaths(Options options) {
		this.options = options;
		this.port = options.intValue("redis-port", 0);
	}

	static void main(Options options) throws Exception {
		new RedisClientPaths(options).run();
	}

	private void run() throws Exception {
		RedisClient lettuceClient = RedisClient.create(RedisURI.create("127.0.0.1", this.port));
		// A pool as large as the most threads, as spring.data.redis.jedis.pool.max-active
		// would set it for 64 request threads.
		JedisConnectionFactory jedisFactory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.port),
				JedisClientConfiguration.builder().usePooling().poolConfig(pool(64)).build());
		List<Measurement> measurements = new ArrayList<>();
		try (RedisRateLimitStore lettuce = started(RedisRateLimitStore.builder(lettuceClient));
				RedisRateLimitStore jedis = started(RedisRateLimitStore.builder(jedisFactory))) {
			Map<String, RedisRateLimitStore> stores = new LinkedHashMap<>();
			stores.put("lettuce", lettuce);
			stores.put("jedis", jedis);
			for (String variant : List.of("sync-c16", "sync-c64", "async-c64")) {
				measurements.addAll(compare(variant, stores));
			}
		}
		finally {
			lettuceClient.shutdown();
		}
		Measurement.append(this.options.csv(), measurements);
	}

	private static GenericObjectPoolConfig<?> pool(int size) {
		GenericObjectPoolConfig<?> pool = new GenericObjectPoolConfig<>();
		pool.setMaxTotal(size);
		pool.setMaxIdle(size);
		return pool;
	}

	private static RedisRateLimitStore started(RedisRateLimitStore.Builder builder) {
		RedisRateLimitStore store = builder.keyPrefix("paths").timeout(Duration.ofSeconds(1)).build();
		store.start();
		return store;
	}

	private List<Measurement> compare(String variant, Map<String, RedisRateLimitStore> stores) throws Exception {
		Duration trial = this.options.duration("trial", Duration.ofSeconds(3));
		int trials = this.options.intValue("trials", 5);
		int concurrency = Integer.parseInt(variant.substring(variant.indexOf("-c") + 2));
		boolean async = variant.startsWith("async");
		Map<String, double[]> samples = new LinkedHashMap<>();
		List<String> names = new ArrayList<>(stores.keySet());
		for (String name : names) {
			samples.put(name, new double[trials]);
			measure(Objects.requireNonNull(stores.get(name)), async, concurrency, trial);
		}
		for (int i = 0; i < trials; i++) {
			for (int j = 0; j < names.size(); j++) {
				String name = names.get((i + j) % names.size());
				Objects.requireNonNull(samples.get(name))[i] = measure(Objects.requireNonNull(stores.get(name)), async,
						concurrency, trial);
			}
		}
		List<Measurement> measurements = new ArrayList<>();
		for (Map.Entry<String, double[]> entry : samples.entrySet()) {
			Measurement measurement = Measurement.of(COMPARISON, variant, entry.getKey(), "throughput", "decisions/s",
					entry.getValue());
			System.out.printf("%s %s %s: %s%n", COMPARISON, variant, entry.getKey(), measurement);
			measurements.add(measurement);
		}
		return measurements;
	}

	private static double measure(RedisRateLimitStore store, boolean async, int concurrency, Duration trial)
			throws Exception {
		if (async) {
			LoadLoop.Result result = LoadLoop.run((key) -> store.decideAsync("hot", "k", HOT, 1, Long.MAX_VALUE),
					concurrency, 1, trial);
			if (result.failed() > 0) {
				throw new IllegalStateException(result.failed() + " calls failed: " + result.firstFailure());
			}
			return result.opsPerSecond();
		}
		return threads(store, concurrency, trial);
	}

	/** Decisions per second of {@code concurrency} threads each calling decide. */
	private static double threads(RedisRateLimitStore store, int concurrency, Duration trial) throws Exception {
		LongAdder decisions = new LongAdder();
		AtomicBoolean stop = new AtomicBoolean();
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < concurrency; t++) {
			Thread thread = new Thread(() -> {
				while (!stop.get()) {
					store.decide("hot", "k", HOT, 1);
					decisions.increment();
				}
			});
			thread.start();
			threads.add(thread);
		}
		// Measure after every thread has started, as LoadLoop does.
		Thread.sleep(100);
		long c0 = decisions.sum();
		long t0 = System.nanoTime();
		Thread.sleep(trial.toMillis());
		long c1 = decisions.sum();
		long t1 = System.nanoTime();
		stop.set(true);
		for (Thread thread : threads) {
			thread.join();
		}
		return (c1 - c0) * 1e9 / (t1 - t0);
	}

}
