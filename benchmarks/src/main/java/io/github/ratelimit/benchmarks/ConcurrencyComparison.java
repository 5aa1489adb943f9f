package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.redisson.Redisson;
import org.redisson.api.RFuture;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.SingleServerConfig;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.concurrency.OnStoreFailure;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;

/**
 * Our distributed concurrency limit ({@link RedisRateLimitStore} as a
 * {@link io.github.ratelimit.concurrency.ConcurrencyStore}) against Redisson's
 * {@link RPermitExpirableSemaphore}, same Redis, alternating paired trials
 * ({@link PairedTrials}): {@code redis-concurrency-vs-redisson-semaphore}, one operation
 * being the acquire of one permit with a lease and its release, variants {@code hot-c64}
 * (one key) and {@code 100k-c64} (100,000 keys visited in a scrambled order). Its ratio
 * is throughput ours / Redisson's; the headline is the lower of the two (goal 1.5).
 * <p>
 * 64 operations in flight as 64 platform threads, each running acquire then release with
 * the blocking API of its side, then the next operation ({@link LoadLoop} with a call
 * that completes before it returns keeps one chain per thread): our store has no
 * asynchronous acquire, and a servlet application's callers block in the same way. Both
 * sides block on a future their client's event loop completes. Each side runs on a client
 * of its own with its defaults as an application would get them: ours one Lettuce
 * connection ({@code EVALSHA} of {@code concurrency.lua}; the acquires and releases that
 * arrive while a call is in flight go together in the next one, as an application's do),
 * Redisson its connection pool (64 connections) and script cache ({@code EVALSHA}; its
 * release also publishes to the semaphore's channel, as Redisson always does). Holders
 * are unique per acquire (the thread's id and a counter); Redisson makes its own permit
 * ids. Both lease 30s and have 100,000 permits per key (Redisson: {@code trySetPermits}
 * on every key before a variant), so that none is refused with 64 in flight; refusals are
 * counted all the same (metric {@code rejections}) and a release that finds no permit
 * fails the run. After the trials each side runs once more alone for the commands and
 * Redis CPU per operation ({@code INFO commandstats}, {@code INFO cpu}).
 * <p>
 * One command, from the repository's root, after
 * {@code (cd benchmarks && mvn -q -DskipTests package)}: <pre>
 * java -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" \
 *   io.github.ratelimit.benchmarks.Main redis-concurrency --trial=3s --trials=5 --warmup=3s --csv=/tmp/concurrency.csv
 * </pre> Without {@code --redis-port=N} it starts {@code redis-server} (on the PATH) on a
 * free port, without persistence, and stops it when it ends. {@code --only=hot} or
 * {@code --only=100k} runs one variant; {@code --redisson-pool=N} and
 * {@code --redisson-netty-threads=N} change Redisson's defaults (64, 32) to see how much
 * they matter. It prints each round, the measurements, and
 * {@code RATIO redis-concurrency-vs-redisson-semaphore <value> range <min>-<max> ...} as
 * {@code report} would.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ConcurrencyComparison {

	static final String COMPARISON = "redis-concurrency-vs-redisson-semaphore";

	/**
	 * A request limited by the rate and the concurrency of one bucket: one script call
	 * for the permit and the decision (ours) against the permit and the decision in two
	 * ({@code two-calls}), each then releasing its permit.
	 */
	static final String BOTH = "redis-rate-and-concurrency-one-call-vs-two";

	/** The most a key may have: never reached by 64 operations in flight. */
	static final int PERMITS = ConcurrencyLimit.MAX_PERMITS;

	static final Duration LEASE = ConcurrencyLimit.DEFAULT_LEASE;

	private static final int CONCURRENCY = 64;

	private static final String BUCKET = "api";

	private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

	private final RedisURI uri;

	private final Options options;

	private final MachineLoad load;

	private ConcurrencyComparison(int port, Options options) {
		this.uri = RedisURI.create("127.0.0.1", port);
		this.options = options;
		this.load = MachineLoad.of(options);
	}

	static void main(Options options) throws Exception {
		onRedis(options, ConcurrencyComparison::run);
	}

	/**
	 * Runs {@link #BOTH}: {@code Main redis-rate-and-concurrency}, with the options of
	 * {@code redis-concurrency}; variants {@code c4-100k} and {@code c64-100k} (requests
	 * in flight, 100,000 keys). It prints the measurements, the ratio one call / two
	 * calls as {@code pair-ratio}.
	 * @param options the options
	 * @throws Exception when a run fails
	 */
	static void mainBoth(Options options) throws Exception {
		onRedis(options, (comparison) -> {
			List<Measurement> measurements = new ArrayList<>();
			measurements.addAll(comparison.compareBoth("c4-100k", 4, 100_000));
			measurements.addAll(comparison.compareBoth("c64-100k", 64, 100_000));
			Measurement.append(options.csv(), measurements);
		});
	}

	/**
	 * Runs a comparison on the Redis of {@code --redis-port}, or on a
	 * {@code redis-server} of its own, stopped once it ends.
	 */
	private static void onRedis(Options options, Run run) throws Exception {
		int port = options.intValue("redis-port", 0);
		Process redis = null;
		if (port == 0) {
			port = freePort();
			redis = startRedis(port);
		}
		try {
			run.on(new ConcurrencyComparison(port, options));
		}
		finally {
			if (redis != null) {
				redis.destroy();
				redis.waitFor(10, TimeUnit.SECONDS);
			}
		}
	}

	/** What runs on a comparison's Redis. */
	@FunctionalInterface
	private interface Run {

		void on(ConcurrencyComparison comparison) throws Exception;

	}

	private List<Measurement> compareBoth(String variant, int inFlight, int keys) throws Exception {
		System.out.printf("%s %s: %d in flight, %d key(s)%n", BOTH, variant, inFlight, keys);
		redis(RedisCommands::flushall);
		try (Contender one = both("ours", true, keys); Contender two = both("two-calls", false, keys)) {
			return pairedTrials(BOTH, variant, inFlight, keys, one, two);
		}
	}

	/**
	 * Warms both sides up, then runs the paired trials: their throughput and how many
	 * operations each had refused.
	 */
	private List<Measurement> pairedTrials(String comparison, String variant, int inFlight, int keys, Contender ours,
			Contender theirs) throws Exception {
		Duration trial = this.options.duration("trial", Duration.ofSeconds(3));
		int trials = this.options.intValue("trials", 5);
		Map<String, Contender> both = new LinkedHashMap<>();
		both.put(ours.name, ours);
		both.put(theirs.name, theirs);
		for (Contender contender : both.values()) {
			check(LoadLoop.run(contender.call, inFlight, keys, this.options.duration("warmup", trial)), contender);
		}
		PairedTrials pairs = PairedTrials.run(List.copyOf(both.keySet()), trials, this.load, "ops/s", (side) -> {
			Contender contender = Objects.requireNonNull(both.get(side));
			return PairedTrials.Figures
				.throughput(check(LoadLoop.run(contender.call, inFlight, keys, trial), contender).opsPerSecond());
		});
		Map<String, String> impls = new LinkedHashMap<>();
		both.keySet().forEach((side) -> impls.put(side, side));
		List<Measurement> measurements = new ArrayList<>(pairs.measurements(comparison, variant, impls));
		for (Contender contender : both.values()) {
			measurements.add(Measurement.of(comparison, variant, contender.name, "rejections", "operations",
					new double[] { contender.rejected.sum() }));
		}
		return measurements;
	}

	/**
	 * A request on a rule with both limits as an application makes it: the acquirer on
	 * Redis behind its failure mode, the bucket's concurrency limiter on Redis; the
	 * permit released once the request is done.
	 */
	private Contender both(String name, boolean oneCall, int keys) {
		String[] keyNames = keyNames(keys);
		RedisClient client = RedisClient.create(this.uri);
		RedisRateLimitStore store = RedisRateLimitStore.builder(client).timeout(Duration.ofSeconds(2)).build();
		store.start(Duration.ofSeconds(5));
		FailoverRateLimitStore failover = new FailoverRateLimitStore(store, InMemoryRateLimitStore.create(),
				FailureMode.FALLBACK);
		Acquirer acquirer = Acquirer.builder(failover).build();
		LeaseRenewer renewer = new LeaseRenewer();
		ConcurrencyLimiter limiter = new ConcurrencyLimiter(store, BUCKET, new ConcurrencyLimit(PERMITS, LEASE),
				renewer, List.of(), OnStoreFailure.REJECT);
		Bucket bucket = Bucket.of(BUCKET, LimitSpec.of(1_000_000_000L, "1h", Algorithm.SLIDING_WINDOW));
		LongAdder rejected = new LongAdder();
		return new Contender(name, (i) -> {
			PermitRequest request = PermitRequest.of(bucket, keyNames[i], 1);
			ConcurrencyPermit permit;
			Acquisition acquisition;
			if (oneCall) {
				Acquirer.Holding holding = acquirer.acquireHolding(request, limiter);
				permit = holding.permit();
				acquisition = holding.acquisition();
			}
			else {
				permit = limiter.tryAcquire(keyNames[i]);
				acquisition = permit.acquired() ? acquirer.acquire(List.of(request)) : null;
			}
			if (acquisition == null || !acquisition.granted() || !permit.acquired()) {
				rejected.increment();
			}
			permit.release();
			return DONE;
		}, rejected, () -> {
			renewer.close();
			failover.close();
			client.shutdown();
		});
	}

	private void run() throws Exception {
		String only = this.options.value("only", "");
		List<Measurement> measurements = new ArrayList<>();
		if (only.isEmpty() || only.equals("hot")) {
			measurements.addAll(compare("hot-c64", 1));
		}
		if (only.isEmpty() || only.equals("100k")) {
			measurements.addAll(compare("100k-c64", 100_000));
		}
		Measurement.append(this.options.csv(), measurements);
		double busyCores = MachineLoad.busyCores(this.options);
		for (Ratios.Ratio ratio : Ratios.of(measurements, busyCores)) {
			if (!ratio.comparison().equals(COMPARISON)) {
				continue;
			}
			if (ratio.headline()) {
				System.out.println(Report.ratioLine(ratio, busyCores));
			}
			else {
				System.out.printf(Locale.ROOT,
						"  %s: ours %.0f ops/s (%.0f-%.0f), redisson %.0f ops/s (%.0f-%.0f), ours/theirs %.3f %s%n",
						ratio.variant(), ratio.ours().median(), ratio.ours().min(), ratio.ours().max(),
						ratio.theirs().median(), ratio.theirs().min(), ratio.theirs().max(), ratio.value(),
						ratio.range());
			}
		}
	}

	private List<Measurement> compare(String variant, int keys) throws Exception {
		System.out.printf("%s %s: %d in flight, %d key(s)%n", COMPARISON, variant, CONCURRENCY, keys);
		redis(RedisCommands::flushall);
		try (Contender ours = ours(keys); Contender theirs = redisson(keys)) {
			List<Measurement> measurements = new ArrayList<>(
					pairedTrials(COMPARISON, variant, CONCURRENCY, keys, ours, theirs));
			measurements.addAll(countCommands(variant, ours, keys));
			measurements.addAll(countCommands(variant, theirs, keys));
			return measurements;
		}
	}

	private Contender ours(int keys) {
		String[] keyNames = keyNames(keys);
		ConcurrencyLimit limit = new ConcurrencyLimit(PERMITS, LEASE);
		RedisClient client = RedisClient.create(this.uri);
		RedisRateLimitStore store = RedisRateLimitStore.builder(client).timeout(Duration.ofSeconds(2)).build();
		store.start(Duration.ofSeconds(5));
		LongAdder rejected = new LongAdder();
		ThreadLocal<HolderSequence> holders = ThreadLocal.withInitial(HolderSequence::new);
		return new Contender("ours", (i) -> {
			String holder = holders.get().next();
			ConcurrencyDecision decision = store.acquire(BUCKET, keyNames[i], limit, holder);
			if (!decision.acquired()) {
				rejected.increment();
			}
			else if (!store.release(BUCKET, keyNames[i], holder)) {
				throw new IllegalStateException("Released no permit for " + holder + " on " + keyNames[i]);
			}
			return DONE;
		}, rejected, () -> {
			store.close();
			client.shutdown();
		});
	}

	private Contender redisson(int keys) {
		String[] keyNames = keyNames(keys);
		Config config = new Config();
		SingleServerConfig server = config.useSingleServer()
			.setAddress("redis://" + this.uri.getHost() + ":" + this.uri.getPort());
		// Redisson's defaults unless asked: 64 connections, 32 Netty threads.
		int pool = this.options.intValue("redisson-pool", server.getConnectionPoolSize());
		server.setConnectionPoolSize(pool)
			.setConnectionMinimumIdleSize(Math.min(pool, server.getConnectionMinimumIdleSize()));
		config.setNettyThreads(this.options.intValue("redisson-netty-threads", config.getNettyThreads()));
		RedissonClient client = Redisson.create(config);
		RPermitExpirableSemaphore[] semaphores = new RPermitExpirableSemaphore[keys];
		for (int i = 0; i < keys; i++) {
			semaphores[i] = client.getPermitExpirableSemaphore("rs:{" + BUCKET + ":" + keyNames[i] + "}");
		}
		// Every key's permits, set before the variant and not timed, 1000 calls at a
		// time.
		for (int from = 0; from < keys; from += 1000) {
			List<RFuture<Boolean>> set = new ArrayList<>();
			for (int i = from; i < Math.min(keys, from + 1000); i++) {
				set.add(semaphores[i].trySetPermitsAsync(PERMITS));
			}
			for (RFuture<Boolean> done : set) {
				if (!done.toCompletableFuture().join()) {
					throw new IllegalStateException("A semaphore had its permits already");
				}
			}
		}
		long leaseMillis = LEASE.toMillis();
		LongAdder rejected = new LongAdder();
		return new Contender("redisson-semaphore", (i) -> {
			String permitId;
			try {
				permitId = semaphores[i].tryAcquire(0, leaseMillis, TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			if (permitId == null) {
				rejected.increment();
			}
			else {
				// Throws when the permit is no longer there.
				semaphores[i].release(permitId);
			}
			return DONE;
		}, rejected, client::shutdown);
	}

	private static String[] keyNames(int keys) {
		String[] keyNames = new String[keys];
		for (int i = 0; i < keys; i++) {
			keyNames[i] = String.format("user-%07d", i);
		}
		return keyNames;
	}

	/**
	 * Runs one side alone for a second and divides the commands Redis ran and the CPU it
	 * used by the operations.
	 */
	private List<Measurement> countCommands(String variant, Contender contender, int keys) throws Exception {
		redis(RedisCommands::configResetstat);
		double cpuBefore = redisCpuSeconds();
		LoadLoop.Result result = check(
				LoadLoop.run(contender.call, CONCURRENCY, keys, this.options.duration("count", Duration.ofSeconds(1))),
				contender);
		double cpuMicros = (redisCpuSeconds() - cpuBefore) * 1e6;
		Map<String, Long> commands = commandStats();
		double operations = result.completed();
		long total = commands.values().stream().mapToLong(Long::longValue).sum();
		System.out.printf("  %s commands: %s%n", contender.name, commands);
		return List.of(
				Measurement.of(COMPARISON, variant, contender.name, "redis-commands", "commands/operation",
						new double[] { total / operations }),
				Measurement.of(COMPARISON, variant, contender.name, "redis-cpu", "µs/operation",
						new double[] { cpuMicros / operations }));
	}

	private Map<String, Long> commandStats() {
		Map<String, Long> stats = new LinkedHashMap<>();
		for (String line : redis((commands) -> commands.info("commandstats")).split("\r?\n")) {
			// cmdstat_evalsha:calls=123,usec=...
			if (line.startsWith("cmdstat_")) {
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				// The benchmark's own CONFIG RESETSTAT, INFO and HELLO are not
				// operations'.
				if (!name.startsWith("config") && !name.equals("info") && !name.equals("hello")) {
					String calls = line.substring(line.indexOf("calls=") + 6);
					stats.put(name, Long.parseLong(calls.substring(0, calls.indexOf(','))));
				}
			}
		}
		return stats;
	}

	private double redisCpuSeconds() {
		double seconds = 0;
		for (String line : redis((commands) -> commands.info("cpu")).split("\r?\n")) {
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

	private static LoadLoop.Result check(LoadLoop.Result result, Contender contender) {
		if (result.failed() > 0) {
			throw new IllegalStateException(
					contender.name + " failed " + result.failed() + " call(s), first: " + result.firstFailure());
		}
		return result;
	}

	/**
	 * A port nothing listens on, below the ephemeral range (as {@code run.sh} picks
	 * them), never 6379.
	 */
	private static int freePort() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = 15_000 + ThreadLocalRandom.current().nextInt(17_000);
			if (port != 6379 && !listening(port)) {
				return port;
			}
		}
		throw new IllegalStateException("No free port found");
	}

	private static boolean listening(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/** Starts a redis-server of this benchmark's own, stopped when the JVM ends. */
	private static Process startRedis(int port) throws IOException, InterruptedException {
		Process redis = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no")
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
		Runtime.getRuntime().addShutdownHook(new Thread(redis::destroy));
		for (int i = 0; i < 100; i++) {
			if (listening(port)) {
				System.out.printf("redis-server (pid %d) on port %d%n", redis.pid(), port);
				return redis;
			}
			if (!redis.isAlive()) {
				throw new IllegalStateException("redis-server exited with " + redis.exitValue());
			}
			Thread.sleep(100);
		}
		redis.destroy();
		throw new IllegalStateException("redis-server did not listen on port " + port + " within 10s");
	}

	/**
	 * One side: an operation (acquire, then release) on the key with the given index,
	 * done when it returns.
	 */
	private record Contender(String name, LoadLoop.AsyncCall call, LongAdder rejected,
			Runnable closer) implements AutoCloseable {

		@Override
		public void close() {
			this.closer.run();
		}

	}

	/** A thread's holders: its id and a counter, unique in this JVM. */
	private static final class HolderSequence {

		private final String prefix = "t" + Thread.currentThread().getId() + "-";

		private long next;

		String next() {
			return this.prefix + (++this.next);
		}

	}

}
