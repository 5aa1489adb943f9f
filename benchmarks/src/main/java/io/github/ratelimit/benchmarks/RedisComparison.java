package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * Redis side by side, same Redis, same client library, same concurrency, alternating
 * trials so drift hits both sides alike:
 * <ul>
 * <li>{@code redis-vs-lettuce-evalsha-c64}: our {@link RedisRateLimitStore} (token
 * bucket, one hot key, 64 calls in flight through {@code decideAsync}, concurrent
 * decisions coalesced as auto-configured) against plain Lettuce async {@code EVALSHA} of
 * {@code token_bucket_minimal.lua}, the same state (one string per key) and Redis
 * commands with nothing else: the client's ceiling.</li>
 * <li>{@code redis-vs-bucket4j-lettuce-hot} and {@code -100k}: ours against Bucket4j's
 * Lettuce compare-and-swap proxy manager, at 16 and 64 in flight, on one key and on
 * 100,000 keys.</li>
 * <li>{@code redis-vs-bucket4j-lettuce-batching-hot-c64}: ours (which sends the decisions
 * that arrive while one is in flight on the same key as one call) against Bucket4j's
 * Lettuce proxy manager with its batching optimisation, one hot key, 64 in flight.</li>
 * <li>{@code redis-flood-local-rejections}: one key flooded at 64 in flight while every
 * request is rejected, through the store the auto-configuration builds, with the
 * rejection cache (ours) and without it (the store before the cache existed).</li>
 * </ul>
 * Commands per decision are counted twice in a separate run per variant: on the wire (a
 * Lettuce {@link CommandListener}) and in Redis ({@code INFO commandstats}, which also
 * counts the commands scripts run).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RedisComparison {

	/**
	 * The hot key's limit, 10^9 per hour: never exhausted in a run, so every decision is
	 * allowed.
	 */
	static final LimitSpec HOT_LIMIT = LimitSpec.of(1_000_000_000L, Duration.ofHours(1), Algorithm.TOKEN_BUCKET);

	/**
	 * Each of 100,000 keys' limit, 1000 per day: a key sees a few dozen decisions per
	 * run, all allowed, and its state lives (86.4s per permit taken) from one visit to
	 * the next, as a real user's would. Not per hour: keys then expired seconds after a
	 * visit, and Redis expired one side's keys during the other side's trial, which made
	 * the side that ran second in a round about 20% slower and the rounds' ratios drift.
	 */
	static final LimitSpec PER_USER_LIMIT = LimitSpec.of(1000, Duration.ofDays(1), Algorithm.TOKEN_BUCKET);

	/**
	 * The flooded key's limit, 1 per hour: after the first decision every request is
	 * rejected, for the whole run.
	 */
	static final LimitSpec FLOOD_LIMIT = LimitSpec.of(1, Duration.ofHours(1), Algorithm.SLIDING_LOG);

	private final RedisURI uri;

	private final Options options;

	private final Path csv;

	private final MachineLoad load;

	private RedisComparison(RedisURI uri, Options options, Path csv) {
		this.uri = uri;
		this.options = options;
		this.csv = csv;
		this.load = MachineLoad.of(options);
	}

	static void main(Options options) throws Exception {
		RedisURI uri = RedisURI.create("127.0.0.1", options.intValue("redis-port", 0));
		new RedisComparison(uri, options, options.csv()).run();
	}

	private void run() throws Exception {
		String only = this.options.value("only", "");
		if (only.isEmpty() || only.equals("evalsha")) {
			compare("redis-vs-lettuce-evalsha-c64", "hot-c64", "lettuce-evalsha", 64, 1);
		}
		if (only.isEmpty() || only.equals("bucket4j-batching")) {
			compare("redis-vs-bucket4j-lettuce-batching-hot-c64", "hot-c64", "bucket4j-lettuce-batching", 64, 1);
		}
		if (only.isEmpty() || only.equals("flood")) {
			compare("redis-flood-local-rejections", "flood-c64", "flood-ours", "flood-without-local-rejections", 64, 1);
		}
		if (only.isEmpty() || only.equals("bucket4j")) {
			for (int keys : new int[] { 1, 100_000 }) {
				for (int concurrency : new int[] { 16, 64 }) {
					String name = "redis-vs-bucket4j-lettuce-" + ((keys == 1) ? "hot" : "100k");
					compare(name, ((keys == 1) ? "hot" : "100k") + "-c" + concurrency, "bucket4j-lettuce", concurrency,
							keys);
				}
			}
		}
	}

	private void compare(String comparison, String variant, String peer, int concurrency, int keys) throws Exception {
		compare(comparison, variant, "ours", peer, concurrency, keys);
	}

	private void compare(String comparison, String variant, String oursImpl, String peer, int concurrency, int keys)
			throws Exception {
		System.out.printf("%s %s: %d in flight, %d key(s)%n", comparison, variant, concurrency, keys);
		flushAll();
		Duration trial = this.options.duration("trial", Duration.ofSeconds(3));
		int trials = this.options.intValue("trials", 5);
		List<Measurement> measurements = new ArrayList<>();
		// A client per side, as each would be in an application of its own: sharing one,
		// a side ran at half speed right after Bucket4j's batching proxy had run on it
		// (its event loops and timer), whichever side that was.
		RedisClient client = RedisClient.create(this.uri);
		RedisClient peerClient = RedisClient.create(this.uri);
		try (Contender ours = contender(oursImpl, client, keys); Contender theirs = contender(peer, peerClient, keys)) {
			Map<String, Contender> both = new LinkedHashMap<>();
			both.put("ours", ours);
			both.put(peer, theirs);
			for (Contender contender : both.values()) {
				check(LoadLoop.run(contender.call, concurrency, keys, this.options.duration("warmup", trial)),
						contender);
			}
			PairedTrials pairs = PairedTrials.run(List.copyOf(both.keySet()), trials, this.load, "decisions/s",
					(side) -> {
						Contender contender = Objects.requireNonNull(both.get(side));
						return PairedTrials.Figures
							.throughput(check(LoadLoop.run(contender.call, concurrency, keys, trial), contender)
								.opsPerSecond());
					});
			Map<String, String> impls = new LinkedHashMap<>();
			impls.put("ours", "ours");
			impls.put(peer, peer);
			measurements.addAll(pairs.measurements(comparison, variant, impls));
		}
		finally {
			client.shutdown();
			peerClient.shutdown();
		}
		measurements.addAll(countCommands(comparison, variant, oursImpl, concurrency, keys));
		measurements.addAll(countCommands(comparison, variant, peer, concurrency, keys));
		Measurement.append(this.csv, measurements);
	}

	/**
	 * Runs one contender on a client of its own that counts commands on the wire, and
	 * reads Redis's own count.
	 */
	private List<Measurement> countCommands(String comparison, String variant, String impl, int concurrency, int keys)
			throws Exception {
		CountingListener wire = new CountingListener();
		RedisClient client = RedisClient.create(this.uri);
		client.addListener(wire);
		try (Contender contender = contender(impl, client, keys)) {
			LoadLoop.run(contender.call, concurrency, keys, Duration.ofMillis(300));
			wire.counts.clear();
			redis((commands) -> commands.configResetstat());
			double cpuBefore = redisCpuSeconds();
			LoadLoop.Result result = check(LoadLoop.run(contender.call, concurrency, keys,
					this.options.duration("count", Duration.ofSeconds(1))), contender);
			double cpuMicros = (redisCpuSeconds() - cpuBefore) * 1e6;
			Map<String, Long> server = commandStats();
			double decisions = result.completed();
			long onWire = wire.counts.values().stream().mapToLong(LongAdder::sum).sum();
			long inRedis = server.values().stream().mapToLong(Long::longValue).sum();
			System.out.printf("  %s commands: wire %s, redis %s%n", impl, wire.snapshot(), server);
			return List.of(
					Measurement.of(comparison, variant, contender.name, "wire-commands", "commands/decision",
							new double[] { onWire / decisions }),
					Measurement.of(comparison, variant, contender.name, "redis-commands", "commands/decision",
							new double[] { inRedis / decisions }),
					Measurement.of(comparison, variant, contender.name, "redis-cpu", "µs/decision",
							new double[] { cpuMicros / decisions }));
		}
		finally {
			client.shutdown();
		}
	}

	private Contender contender(String impl, RedisClient client, int keys) {
		String[] keyNames = new String[keys];
		for (int i = 0; i < keys; i++) {
			keyNames[i] = String.format("user-%07d", i);
		}
		LimitSpec limit = impl.startsWith("flood-") ? FLOOD_LIMIT : (keys == 1) ? HOT_LIMIT : PER_USER_LIMIT;
		List<LimitSpec> limits = List.of(limit);
		switch (impl) {
			case "flood-ours", "flood-without-local-rejections":
				// As the auto-configuration builds it, with and without the rejection
				// cache.
				RedisRateLimitStore redis = RedisRateLimitStore.builder(client).timeout(Duration.ofSeconds(2)).build();
				redis.start(Duration.ofSeconds(5));
				FailoverRateLimitStore failover = FailoverRateLimitStore
					.builder(redis, InMemoryRateLimitStore.builder().build())
					.rejectionCache(impl.equals("flood-ours")
							? new RejectionCache(10_000, RejectionCache.DEFAULT_MAX_AGE) : null)
					.build();
				return new Contender(impl.equals("flood-ours") ? "ours" : impl,
						(i) -> failover.decideAsync("flood", keyNames[i], limits, 1, RateLimitStore.NO_MAX_DELAY),
						failover::close);
			case "ours":
				RedisRateLimitStore store = RedisRateLimitStore.builder(client).timeout(Duration.ofSeconds(2)).build();
				store.start(Duration.ofSeconds(5));
				return new Contender(impl,
						(i) -> store.decideAsync("api", keyNames[i], limits, 1, RateLimitStore.NO_MAX_DELAY),
						store::close);
			case "lettuce-evalsha":
				StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8);
				RedisAsyncCommands<String, String> async = connection.async();
				String sha = connection.sync().scriptLoad(minimalScript());
				long intervalMicros = Math.max(1, limit.emissionIntervalMicros());
				String tolerance = Long.toString(limit.burst() * intervalMicros);
				String interval = Long.toString(intervalMicros);
				String[][] keyArrays = new String[keys][];
				for (int i = 0; i < keys; i++) {
					// The same key shape as ours: rl:{<bucket>:<key>}:tb0.
					keyArrays[i] = new String[] { "ev:{api:" + keyNames[i] + "}:tb0" };
				}
				return new Contender(impl, (i) -> async.<List<Object>>evalsha(sha, ScriptOutputType.MULTI, keyArrays[i],
						tolerance, interval, "1"), connection::close);
			case "bucket4j-lettuce":
				BucketConfiguration configuration = BucketConfiguration.builder()
					.addLimit((bandwidth) -> bandwidth.capacity(limit.burst())
						.refillGreedy(limit.limit(), limit.window()))
					.build();
				// Keys expire once the bucket would be full again, like ours.
				var proxyManager = Bucket4jLettuce.casBasedBuilder(client)
					.expirationAfterWrite(
							ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
					.build();
				AsyncProxyManager<byte[]> buckets = proxyManager.asAsync();
				byte[][] keyBytes = new byte[keys][];
				for (int i = 0; i < keys; i++) {
					keyBytes[i] = ("b4j:{api:" + keyNames[i] + "}").getBytes(StandardCharsets.UTF_8);
				}
				Supplier<CompletableFuture<BucketConfiguration>> config = () -> CompletableFuture
					.completedFuture(configuration);
				return new Contender(impl, (i) -> buckets.builder().build(keyBytes[i], config).tryConsume(1), () -> {
				});
			case "bucket4j-lettuce-batching":
				// Bucket4j's answer to a hot key: requests on one bucket proxy that
				// arrive while a call is in flight go together in the next. It batches
				// per proxy, so each key's proxy is built once.
				BucketConfiguration batchedConfiguration = BucketConfiguration.builder()
					.addLimit((bandwidth) -> bandwidth.capacity(limit.burst())
						.refillGreedy(limit.limit(), limit.window()))
					.build();
				AsyncProxyManager<byte[]> batchedBuckets = Bucket4jLettuce.casBasedBuilder(client)
					.expirationAfterWrite(
							ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
					.build()
					.asAsync();
				AsyncBucketProxy[] proxies = new AsyncBucketProxy[keys];
				for (int i = 0; i < keys; i++) {
					proxies[i] = batchedBuckets.builder()
						.withOptimization(Optimizations.batching())
						.build(("b4jb:{api:" + keyNames[i] + "}").getBytes(StandardCharsets.UTF_8),
								() -> CompletableFuture.completedFuture(batchedConfiguration));
				}
				return new Contender(impl, (i) -> proxies[i].tryConsume(1), () -> {
				});
			default:
				throw new IllegalArgumentException("Unknown implementation " + impl);
		}
	}

	private static String minimalScript() {
		try (InputStream in = RedisComparison.class.getResourceAsStream("/benchmarks/token_bucket_minimal.lua")) {
			if (in == null) {
				throw new IllegalStateException("benchmarks/token_bucket_minimal.lua is not on the classpath");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static LoadLoop.Result check(LoadLoop.Result result, Contender contender) {
		if (result.failed() > 0) {
			throw new IllegalStateException(
					contender.name + " failed " + result.failed() + " call(s), first: " + result.firstFailure());
		}
		return result;
	}

	private void flushAll() {
		redis((commands) -> commands.flushall());
	}

	private Map<String, Long> commandStats() {
		Map<String, Long> stats = new LinkedHashMap<>();
		String info = redis((commands) -> commands.info("commandstats"));
		for (String line : info.split("\r?\n")) {
			// cmdstat_evalsha:calls=123,usec=...
			if (line.startsWith("cmdstat_")) {
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				// The benchmark's own CONFIG RESETSTAT, INFO and HELLO are not decisions'
				// work.
				if (!name.startsWith("config") && !name.equals("info") && !name.equals("hello")) {
					String calls = line.substring(line.indexOf("calls=") + 6);
					stats.put(name, Long.parseLong(calls.substring(0, calls.indexOf(','))));
				}
			}
		}
		return stats;
	}

	/**
	 * Returns the CPU time the Redis server used so far (user + system), from
	 * {@code INFO cpu}.
	 */
	private double redisCpuSeconds() {
		String info = redis((commands) -> commands.info("cpu"));
		double seconds = 0;
		for (String line : info.split("\r?\n")) {
			if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
				seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
			}
		}
		return seconds;
	}

	private <T> T redis(Function<RedisCommands<String, String>, T> action) {
		RedisClient client = RedisClient.create(this.uri);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection.sync());
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * One side of a comparison.
	 */
	private record Contender(String name, LoadLoop.AsyncCall call, Runnable closer) implements AutoCloseable {

		@Override
		public void close() {
			this.closer.run();
		}

	}

	/**
	 * Counts commands as Lettuce writes them.
	 */
	private static final class CountingListener implements CommandListener {

		final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

		@Override
		public void commandStarted(CommandStartedEvent event) {
			this.counts.computeIfAbsent(event.getCommand().getType().toString(), (k) -> new LongAdder()).increment();
		}

		Map<String, Long> snapshot() {
			Map<String, Long> result = new LinkedHashMap<>();
			this.counts.forEach((name, count) -> result.put(name, count.sum()));
			return result;
		}

	}

}
