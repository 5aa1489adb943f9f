package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.algorithm.LimitState;
import io.github.ratelimit.algorithm.Transition;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * One decision of an in-process limiter: our {@link InMemoryRateLimitStore} (through the
 * public {@link RateLimiter} API) against a local Bucket4j bucket and a Resilience4j
 * {@code RateLimiter}, on one key or spread over many keys, with a limit that allows
 * everything (the cost of deciding) or one that rejects almost everything.
 * <p>
 * Neither peer has keys: a user keeps one bucket or limiter per key in a
 * {@link ConcurrentHashMap}, which is what the peers do here. That map never forgets a
 * key, where ours is bounded and expires idle keys; the comparison includes that work.
 * <p>
 * All three are token-bucket-like meters with the same limit: {@code allow} is 10^9 per
 * hour (never exhausted within a run), {@code reject} is 1 per hour (the first call per
 * key is allowed, every later one rejected).
 *
 * @author ratelimit-spring-boot-starter authors
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MemoryStoreBenchmark {

	private static final long ALLOW_LIMIT = 1_000_000_000L;

	private static final Duration WINDOW = Duration.ofHours(1);

	/** The limiter: {@code ours}, {@code bucket4j} or {@code resilience4j}. */
	@Param({ "ours", "bucket4j", "resilience4j" })
	public String impl = "ours";

	/** How many distinct keys the calls are spread over. */
	@Param({ "1", "100000" })
	public int keys = 1;

	/** {@code allow}: a limit never reached; {@code reject}: 1 per hour. */
	@Param({ "allow", "reject" })
	public String outcome = "allow";

	/**
	 * Diagnostics for ours, not run by run.sh: {@code default} is the store's default
	 * clock ({@code TimeSource.monotonic()}, based on {@code System.nanoTime()}),
	 * {@code wall} reads the wall clock through {@code Instant.now()}
	 * ({@code TimeSource.system()}).
	 */
	@Param({ "default" })
	public String clock = "default";

	/**
	 * Diagnostics for ours, not run by run.sh: where Caffeine runs its housekeeping,
	 * {@code caller} (the store's default, the deciding thread) or {@code common} (the
	 * common pool, which moves that work to another core when one is idle).
	 */
	@Param({ "caller" })
	public String maintenance = "caller";

	private String[] keyNames = new String[0];

	private Predicate<String> limiter = (key) -> true;

	private InMemoryRateLimitStore store = InMemoryRateLimitStore.create();

	@Setup(Level.Trial)
	public void setUp() {
		this.keyNames = new String[this.keys];
		for (int i = 0; i < this.keys; i++) {
			this.keyNames[i] = String.format("user-%07d", i);
		}
		long limit = "allow".equals(this.outcome) ? ALLOW_LIMIT : 1;
		this.limiter = createLimiter(this.impl, limit);
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.store.close();
	}

	private Predicate<String> createLimiter(String impl, long limit) {
		switch (impl) {
			case "ours":
				InMemoryRateLimitStore.Builder builder = InMemoryRateLimitStore.builder();
				if ("wall".equals(this.clock)) {
					builder.timeSource(TimeSource.system());
				}
				if ("common".equals(this.maintenance)) {
					builder.executor(ForkJoinPool.commonPool());
				}
				this.store = builder.build();
				RateLimiter ours = RateLimiter.builder(this.store)
					.bucket("api")
					.limit(LimitSpec.of(limit, WINDOW, Algorithm.TOKEN_BUCKET))
					.build();
				return (key) -> ours.tryAcquire(key).proceeds();
			case "store":
				// Diagnostic, not run by run.sh: the store's decide called directly,
				// which is what RateLimiter.tryAcquire did before it went through the
				// Acquirer. Against "ours", what the acquisition path (request, result,
				// observers) costs.
				this.store = InMemoryRateLimitStore.builder().build();
				List<LimitSpec> limits = List.of(LimitSpec.of(limit, WINDOW, Algorithm.TOKEN_BUCKET));
				return (key) -> this.store.decide("api", key, limits, 1).allowed();
			case "meter-chm":
				// Diagnostic, not run by run.sh: our algorithm (the same pure function
				// the store uses) on immutable states in a plain ConcurrentHashMap,
				// replaced by compare-and-set, without the store's bounded, expiring
				// Caffeine map. What the algorithm itself costs.
				LimitSpec spec = LimitSpec.of(limit, WINDOW, Algorithm.TOKEN_BUCKET);
				ConcurrentMap<String, LimitState> states = new ConcurrentHashMap<>();
				return (key) -> {
					while (true) {
						LimitState state = states.computeIfAbsent(key, (k) -> LimitState.fresh(spec));
						Transition transition = state.acquire(spec, TimeSource.monotonic().nowMicros(), 1,
								Long.MAX_VALUE);
						if (transition.next() == state || states.replace(key, state, transition.next())) {
							return transition.decision().allowed();
						}
					}
				};
			case "bucket4j":
				ConcurrentMap<String, Bucket> buckets = new ConcurrentHashMap<>();
				return (key) -> buckets.computeIfAbsent(key, (k) -> bucket4j(limit)).tryConsume(1);
			case "bucket4j-probe":
				// Diagnostic, not run by run.sh: Bucket4j returning what our Decision
				// carries (remaining tokens and the wait until a refill), the call its
				// Spring Boot starter makes to write its headers, instead of a boolean.
				ConcurrentMap<String, Bucket> probed = new ConcurrentHashMap<>();
				return (key) -> probed.computeIfAbsent(key, (k) -> bucket4j(limit))
					.tryConsumeAndReturnRemaining(1)
					.isConsumed();
			case "resilience4j":
				RateLimiterConfig config = RateLimiterConfig.custom()
					.limitForPeriod((int) Math.min(limit, Integer.MAX_VALUE))
					.limitRefreshPeriod(WINDOW)
					.timeoutDuration(Duration.ZERO)
					.build();
				ConcurrentMap<String, io.github.resilience4j.ratelimiter.RateLimiter> limiters = new ConcurrentHashMap<>();
				return (key) -> limiters
					.computeIfAbsent(key, (k) -> io.github.resilience4j.ratelimiter.RateLimiter.of(k, config))
					.acquirePermission();
			default:
				throw new IllegalArgumentException("Unknown impl '" + impl + "': ours, bucket4j or resilience4j");
		}
	}

	private static Bucket bucket4j(long limit) {
		return Bucket.builder().addLimit((bandwidth) -> bandwidth.capacity(limit).refillGreedy(limit, WINDOW)).build();
	}

	/**
	 * Each thread walks the keys in its own pseudo-random order.
	 */
	@State(Scope.Thread)
	public static class Cursor {

		private int next = (int) (Thread.currentThread().getId() % 1000) * 7919;

		int next(int size) {
			// A full-period transition through [0, size) that defeats the prefetcher.
			this.next = Math.floorMod(this.next + 40_503, size);
			return this.next;
		}

	}

	@Benchmark
	public boolean decide(Cursor cursor) {
		return this.limiter.test(this.keyNames[cursor.next(this.keyNames.length)]);
	}

}
