package io.github.ratelimit.redis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures Redis memory per tracked key for each algorithm with {@code INFO memory} over
 * 100,000 keys (one decision each, keys like {@code rl:{api:user-0000042}:tb0}), writes
 * the table to {@code target/redis-memory-per-key.md} for the README, and guards against
 * a layout that grows.
 */
class RedisMemoryPerKeyTests {

	private static final int KEYS = 100_000;

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static RedisClient client;

	@BeforeAll
	static void connect() {
		client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
	}

	@AfterAll
	static void disconnect() {
		client.shutdown();
	}

	@Test
	void memoryPerKeyStaysSmallForEveryAlgorithm() throws Exception {
		// A fixed clock at the start of an hour: no window may end (and expire keys)
		// mid-measurement.
		long startOfHour = (System.currentTimeMillis() / 3_600_000L + 1) * 3_600_000_000L;
		RedisRateLimitStore store = RedisRateLimitStore.builder(client)
			.timeSource(() -> startOfHour)
			.expirySlack(Duration.ofHours(1))
			.timeout(Duration.ofSeconds(30))
			.build();
		try {
			store.start(Duration.ofSeconds(5));
			StringBuilder table = new StringBuilder(
					"| algorithm | bytes per key (1 permit) | bytes per key (10 permits) | Redis type |\n|---|---|---|---|\n");
			List<Long> perKey = new ArrayList<>();
			for (Algorithm algorithm : Algorithm.values()) {
				LimitSpec spec = LimitSpec.builder().limit(100).window("1h").algorithm(algorithm).build();
				long one = bytesPerKey(store, spec, 1);
				long ten = bytesPerKey(store, spec, 10);
				String type = typeOf(algorithm);
				table.append("| ")
					.append(algorithm.propertyValue())
					.append(" | ")
					.append(one)
					.append(" | ")
					.append(ten)
					.append(" | ")
					.append(type)
					.append(" |\n");
				perKey.add(one);
				// A loose ceiling: a regression (an extra key or field per decision)
				// trips it.
				assertThat(one).as("%s bytes per key", algorithm).isLessThan(300);
				if (algorithm == Algorithm.SLIDING_LOG) {
					assertThat((ten - one) / 9).as("sliding log bytes per logged permit").isLessThan(40);
				}
				else {
					assertThat(ten).as("%s does not grow with permits", algorithm).isLessThan(one + 16);
				}
			}
			String info = redis.server().command("INFO", "server");
			String version = info.lines()
				.filter((line) -> line.startsWith("redis_version:"))
				.findFirst()
				.orElse("redis_version:?");
			table.append("\nMeasured with INFO memory (used_memory) over ")
				.append(KEYS)
				.append(" keys, ")
				.append(version.trim())
				.append(", by RedisMemoryPerKeyTests.\n");
			Path report = Path.of("target", "redis-memory-per-key.md");
			Files.createDirectories(report.getParent());
			Files.writeString(report, table);
			System.out.println(table);
		}
		finally {
			store.close();
		}
	}

	private static String typeOf(Algorithm algorithm) {
		switch (algorithm) {
			case FIXED_WINDOW:
			case TOKEN_BUCKET:
			case GCRA:
			case LEAKY_BUCKET:
				return "string";
			case SLIDING_LOG:
				return "list";
			default:
				return "hash";
		}
	}

	private static long bytesPerKey(RedisRateLimitStore store, LimitSpec spec, long cost) throws Exception {
		redis.server().flushAll();
		long before = usedMemory();
		List<LimitSpec> limits = List.of(spec);
		List<CompletableFuture<?>> inFlight = new ArrayList<>();
		for (int i = 0; i < KEYS; i++) {
			inFlight.add(store.decideAsync("api", String.format("user-%07d", i), limits, cost, Long.MAX_VALUE)
				.toCompletableFuture());
			if (inFlight.size() == 512) {
				CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
				inFlight.clear();
			}
		}
		CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
		assertThat(redis.server().command("DBSIZE").trim()).isEqualTo(Integer.toString(KEYS));
		return (usedMemory() - before) / KEYS;
	}

	private static long usedMemory() throws IOException {
		return redis.server()
			.command("INFO", "memory")
			.lines()
			.filter((line) -> line.startsWith("used_memory:"))
			.map((line) -> Long.parseLong(line.substring("used_memory:".length()).trim()))
			.findFirst()
			.orElseThrow(() -> new IOException("INFO memory has no used_memory"));
	}

}
