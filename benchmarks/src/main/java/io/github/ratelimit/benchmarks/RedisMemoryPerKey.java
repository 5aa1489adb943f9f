package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Redis memory per key per algorithm: flush, read {@code used_memory}, make one decision
 * (and, for the sliding log, ten) on each of 100,000 keys
 * ({@code rl:{api:user-0000042}:…}, 100 per hour), read it again and divide. The floors
 * beside it are bare {@code SET}s of one string per key: what Redis itself charges for a
 * key of that name with an expiry, whatever the algorithm.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RedisMemoryPerKey {

	private static final int KEYS = 100_000;

	private RedisMemoryPerKey() {
	}

	static void main(Options options) throws Exception {
		RedisURI uri = RedisURI.create("127.0.0.1", options.intValue("redis-port", 0));
		RedisClient client = RedisClient.create(uri);
		List<Measurement> measurements = new ArrayList<>();
		try (StatefulRedisConnection<String, String> admin = client.connect();
				RedisRateLimitStore store = RedisRateLimitStore.builder(client)
					.timeout(Duration.ofSeconds(5))
					.build()) {
			store.start(Duration.ofSeconds(5));
			RedisCommands<String, String> sync = admin.sync();
			String[] keys = new String[KEYS];
			for (int i = 0; i < KEYS; i++) {
				keys[i] = String.format("user-%07d", i);
			}
			for (Algorithm algorithm : Algorithm.values()) {
				List<LimitSpec> limits = List.of(LimitSpec.of(100, Duration.ofHours(1), algorithm));
				IntFunction<CompletionStage<?>> decide = (i) -> store.decideAsync("api", keys[i % KEYS], limits, 1,
						RateLimitStore.NO_MAX_DELAY);
				double one = bytesPerKey(sync, decide, 1);
				measurements.add(Measurement.of("redis-memory-per-key", algorithm.code(), "ours", "memory", "bytes/key",
						new double[] { one }));
				if (algorithm == Algorithm.SLIDING_LOG) {
					double ten = bytesPerKey(sync, decide, 10);
					measurements.add(Measurement.of("redis-memory-per-key", "sl-per-permit", "ours", "memory",
							"bytes/permit", new double[] { (ten - one) / 9 }));
				}
			}
			// What Redis charges whatever the algorithm: one string per key, with and
			// without an expiry, with a small shared integer or a 19-digit one, and with
			// a shorter name.
			floor(sync, measurements, "floor-ttl", "'rl:{api:user-' .. string.format('%07d', i) .. '}:tb0'", "'1'",
					true);
			floor(sync, measurements, "floor-ttl-19-digits", "'rl:{api:user-' .. string.format('%07d', i) .. '}:tb0'",
					"'1700000000123456789'", true);
			floor(sync, measurements, "floor-no-ttl", "'rl:{api:user-' .. string.format('%07d', i) .. '}:tb0'", "'1'",
					false);
			floor(sync, measurements, "floor-ttl-12-char-name", "'rl:{' .. string.format('%07d', i) .. '}'", "'1'",
					true);
		}
		finally {
			client.shutdown();
		}
		Measurement.append(options.csv(), measurements);
	}

	private static void floor(RedisCommands<String, String> sync, List<Measurement> measurements, String variant,
			String name, String value, boolean ttl) {
		sync.flushall();
		long before = usedMemory(sync);
		String script = "for i = 0, " + (KEYS - 1) + " do redis.call('SET', " + name + ", " + value
				+ (ttl ? ", 'PX', 3600000" : "") + ") end";
		sync.eval(script, ScriptOutputType.STATUS);
		measurements.add(Measurement.of("redis-memory-per-key", variant, "bare-set", "memory", "bytes/key",
				new double[] { (double) (usedMemory(sync) - before) / KEYS }));
	}

	private static double bytesPerKey(RedisCommands<String, String> sync, IntFunction<CompletionStage<?>> call,
			int perKey) throws InterruptedException {
		sync.flushall();
		long before = usedMemory(sync);
		Semaphore inFlight = new Semaphore(256);
		for (int i = 0; i < KEYS * perKey; i++) {
			inFlight.acquire();
			call.apply(i).whenComplete((result, ex) -> inFlight.release());
		}
		if (!inFlight.tryAcquire(256, 30, TimeUnit.SECONDS)) {
			throw new IllegalStateException("Redis did not answer every call within 30s");
		}
		long keys = sync.dbsize();
		if (keys != KEYS) {
			throw new IllegalStateException("Expected " + KEYS + " keys but Redis holds " + keys);
		}
		return (double) (usedMemory(sync) - before) / KEYS;
	}

	private static long usedMemory(RedisCommands<String, String> sync) {
		for (String line : sync.info("memory").split("\\r?\\n")) {
			if (line.startsWith("used_memory:")) {
				return Long.parseLong(line.substring("used_memory:".length()).trim());
			}
		}
		throw new IllegalStateException("INFO memory has no used_memory");
	}

}
