package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToLongBiFunction;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarUnit;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Feeds the same seeded random traces to {@link InMemoryRateLimitStore} and to the Redis
 * script on one manual clock and requires every {@link Decision} field of every limit to
 * be equal. Traces mix decisions (costs from 1 to {@code Long.MAX_VALUE}, leaky bucket
 * delay bounds), peeks, refunds, resets, several limits per call, and changes of limit,
 * window, burst, segments, penalty and algorithm on live keys; time moves by nothing, by
 * less than a permit's interval, by parts of a window and past every lifetime.
 * <p>
 * {@value #DEFAULT_STEPS} steps in all run with the build;
 * {@code -Dratelimit.differential.steps=1000000} runs a million.
 */
class RedisDifferentialTests {

	private static final int DEFAULT_STEPS = 12_000;

	private static final int SEEDS = 4;

	private static final long START = 1_800_000_000_000_000L;

	/** The latest time a trace reaches: a window of 50 years and more below 2^53 µs. */
	private static final long LATEST = 1L << 52;

	private static final long[] LIMITS = { 1, 3, 10, 20 };

	private static final long[] BURSTS = { 1, 5, 10, 30 };

	private static final Duration[] WINDOWS = { Duration.ofMillis(10), Duration.ofSeconds(1), Duration.ofSeconds(2),
			Duration.ofSeconds(10) };

	private static final int[] SEGMENTS = { 2, 5, 10 };

	/** Penalties a change may set on a limit, none among them. */
	private static final Duration[] PENALTIES = { Duration.ZERO, Duration.ofMillis(5), Duration.ofSeconds(1),
			Duration.ofSeconds(30) };

	private static final String[] KEYS = { "a", "b", "c" };

	/** Calendar units a fixed window may follow. */
	private static final CalendarUnit[] CALENDARS = { CalendarUnit.DAY, CalendarUnit.WEEK, CalendarUnit.MONTH };

	/** Zones of calendar windows: whole and half hours from UTC, with and without DST. */
	private static final String[] ZONES = { "UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata" };

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

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 3, 4 })
	void bothStoresDecideAlikeOnRandomTraces(int seed) {
		int steps = Integer.getInteger("ratelimit.differential.steps", DEFAULT_STEPS) / SEEDS;
		trace(seed, steps, new Traffic(RedisDifferentialTests::randomSpec, RedisDifferentialTests::changed,
				RedisDifferentialTests::cost, RedisDifferentialTests::advance));
	}

	/**
	 * As {@link #bothStoresDecideAlikeOnRandomTraces}, on token bucket, GCRA and leaky
	 * bucket at limits whose emission interval is no whole number of microseconds: from 3
	 * per second to one per nanosecond, bursts up to the largest, and changes of limit
	 * (whose fractions of a microsecond the state counts in), window and burst.
	 */
	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 3, 4 })
	void bothStoresDecideAlikeOnBucketsAtEveryScale(int seed) {
		int steps = Integer.getInteger("ratelimit.differential.steps", DEFAULT_STEPS) / SEEDS / 4;
		trace(seed, steps, new Traffic(RedisDifferentialTests::randomBucket, RedisDifferentialTests::changedBucket,
				RedisDifferentialTests::bucketCost, RedisDifferentialTests::advanceBucket));
	}

	private void trace(int seed, int steps, Traffic traffic) {
		ManualTimeSource time = new ManualTimeSource(START);
		InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder()
			.timeSource(time)
			.executor(Runnable::run)
			.build();
		// The manual clock runs far ahead of Redis's: keys must outlive their real-time
		// TTL.
		try (RateLimitStore redisStore = RedisRateLimitStore.builder(client)
			.timeSource(time)
			.expirySlack(Duration.ofHours(6))
			.timeout(Duration.ofSeconds(5))
			.connectTimeout(Duration.ofSeconds(30))
			.build()) {
			String bucket = "diff-" + seed + "-" + System.nanoTime();
			Random random = new Random(seed);
			List<List<LimitSpec>> limits = new ArrayList<>();
			for (int k = 0; k < KEYS.length; k++) {
				limits.add(List.of(traffic.spec().apply(random)));
			}
			int allowed = 0;
			int rejected = 0;
			// What happened to each key lately, told when the stores disagree on it.
			List<Deque<String>> history = new ArrayList<>();
			for (int k = 0; k < KEYS.length; k++) {
				history.add(new ArrayDeque<>());
			}
			for (int step = 0; step < steps; step++) {
				int k = random.nextInt(KEYS.length);
				String key = KEYS[k];
				traffic.advance().advance(time, random, limits.get(k).get(0));
				List<LimitSpec> specs = limits.get(k);
				String context = "seed " + seed + ", step " + step + ", key " + key + ", " + specs + ", t="
						+ time.nowMicros();
				int op = random.nextInt(100);
				Deque<String> lately = history.get(k);
				while (lately.size() >= 24) {
					lately.removeFirst();
				}
				lately.addLast("t=" + time.nowMicros() + " op " + op + " " + specs);
				try {
					if (op < 8) {
						limits.set(k, traffic.change().apply(random, specs));
					}
					else if (op < 16) {
						long cost = traffic.cost().applyAsLong(random, specs.get(0));
						memory.refund(bucket, key, specs, cost);
						redisStore.refund(bucket, key, specs, cost);
					}
					else if (op < 24) {
						assertSame(memory.peek(bucket, key, specs), redisStore.peek(bucket, key, specs),
								context + ", peek");
					}
					else if (op < 25) {
						memory.reset(bucket, key, specs);
						redisStore.reset(bucket, key, specs);
					}
					else if (op < 30) {
						// A settlement beyond its reservation, into debt when the
						// limit has less left.
						long permits = Math.min(traffic.cost().applyAsLong(random, specs.get(0)), Long.MAX_VALUE / 4)
								* (1 + random.nextInt(4));
						lately.addLast("  owe " + permits);
						assertThat(redisStore.owe(bucket, key, specs, permits)).as(context + ", owed of " + permits)
							.isEqualTo(memory.owe(bucket, key, specs, permits));
					}
					else {
						long cost = traffic.cost().applyAsLong(random, specs.get(0));
						long maxDelay = (random.nextInt(4) == 0) ? (long) random.nextInt(3_000_000)
								: RateLimitStore.NO_MAX_DELAY;
						Decision expected = memory.decide(bucket, key, specs, cost, maxDelay);
						Decision actual = redisStore.decide(bucket, key, specs, cost, maxDelay);
						assertSame(expected, actual, context + ", decide cost " + cost + " max delay " + maxDelay);
						if (expected.allowed()) {
							allowed++;
						}
						else {
							rejected++;
						}
						lately.addLast("  " + expected);
					}
				}
				catch (AssertionError ex) {
					throw new AssertionError(
							ex.getMessage() + "\nlately on key " + key + ":\n" + String.join("\n", lately), ex);
				}
			}
			assertThat(allowed).as("allowed decisions").isGreaterThan(steps / 10);
			assertThat(rejected).as("rejected decisions").isGreaterThan(steps / 10);
		}
	}

	/** How a trace draws its limits, their changes, costs and the time between steps. */
	private record Traffic(Function<Random, LimitSpec> spec,
			BiFunction<Random, List<LimitSpec>, List<LimitSpec>> change, ToLongBiFunction<Random, LimitSpec> cost,
			Clock advance) {
	}

	@FunctionalInterface
	private interface Clock {

		void advance(ManualTimeSource time, Random random, LimitSpec spec);

	}

	static void assertSame(Decision expected, Decision actual, String context) {
		assertThat(actual.limits()).as(context).hasSameSizeAs(expected.limits());
		for (int i = 0; i < expected.limits().size(); i++) {
			Decision e = expected.limits().get(i);
			Decision a = actual.limits().get(i);
			String limit = context + ", limit " + i + ": memory " + e + ", redis " + a;
			assertThat(a.allowed()).as(limit).isEqualTo(e.allowed());
			assertThat(a.limit()).as(limit).isEqualTo(e.limit());
			assertThat(a.remaining()).as(limit).isEqualTo(e.remaining());
			assertThat(a.resetAfterMicros()).as(limit).isEqualTo(e.resetAfterMicros());
			assertThat(a.retryAfterMicros()).as(limit).isEqualTo(e.retryAfterMicros());
			assertThat(a.delayMicros()).as(limit).isEqualTo(e.delayMicros());
			assertThat(a.penaltyStarted()).as(limit).isEqualTo(e.penaltyStarted());
		}
		String all = context + ": memory " + expected + ", redis " + actual;
		assertThat(actual.allowed()).as(all).isEqualTo(expected.allowed());
		assertThat(actual.remaining()).as(all).isEqualTo(expected.remaining());
		assertThat(actual.retryAfterMicros()).as(all).isEqualTo(expected.retryAfterMicros());
		assertThat(actual.resetAfterMicros()).as(all).isEqualTo(expected.resetAfterMicros());
		assertThat(actual.delayMicros()).as(all).isEqualTo(expected.delayMicros());
	}

	static void advance(ManualTimeSource time, Random random, LimitSpec spec) {
		if (spec.calendar() != null && random.nextInt(4) == 0) {
			// Onto a calendar boundary, or the µs before it.
			time.setMicros(spec.calendarWindow(time.nowMicros())[1] - random.nextInt(2));
			return;
		}
		long window = spec.windowMicros();
		switch (random.nextInt(10)) {
			case 0, 1, 2 -> {
			}
			case 3, 4, 5 -> time.advanceMicros(
					1 + random.nextInt((int) Math.max(1, Math.min(window / spec.limit(), Integer.MAX_VALUE))));
			case 6, 7, 8 -> time.advanceMicros((long) (random.nextDouble() * window));
			default -> time.advanceMicros(window + (long) (random.nextDouble() * 3 * window));
		}
	}

	static long cost(Random random, LimitSpec spec) {
		return switch (random.nextInt(20)) {
			case 0 -> spec.capacity() + 1 + random.nextInt(3);
			case 1 -> (random.nextBoolean()) ? Long.MAX_VALUE : LimitSpec.MAX_LIMIT + random.nextInt(3);
			default -> 1 + random.nextInt((int) Math.min(3, spec.capacity()));
		};
	}

	static LimitSpec randomSpec(Random random) {
		Algorithm algorithm = Algorithm.values()[random.nextInt(Algorithm.values().length)];
		LimitSpec.Builder builder = LimitSpec.builder()
			.algorithm(algorithm)
			.limit(LIMITS[random.nextInt(LIMITS.length)])
			.window(WINDOWS[random.nextInt(WINDOWS.length)])
			.burst(BURSTS[random.nextInt(BURSTS.length)])
			.segments(SEGMENTS[random.nextInt(SEGMENTS.length)]);
		if (algorithm == Algorithm.FIXED_WINDOW && random.nextInt(3) == 0) {
			// A calendar window, whose boundaries the caller works out for Redis.
			builder.calendar(CALENDARS[random.nextInt(CALENDARS.length)]).zone(ZONES[random.nextInt(ZONES.length)]);
		}
		return builder.build();
	}

	/** One change: a field of a limit, a limit added or removed, or a new spec. */
	static List<LimitSpec> changed(Random random, List<LimitSpec> specs) {
		LimitSpec spec = specs.get(0);
		LimitSpec.Builder builder = spec.toBuilder();
		switch (random.nextInt(8)) {
			case 0 -> builder.limit(LIMITS[random.nextInt(LIMITS.length)]);
			case 1 -> builder.window(WINDOWS[random.nextInt(WINDOWS.length)]);
			case 2 -> builder.burst(BURSTS[random.nextInt(BURSTS.length)]);
			case 3 -> builder.segments(SEGMENTS[random.nextInt(SEGMENTS.length)]);
			case 4 -> builder.algorithm(Algorithm.values()[random.nextInt(Algorithm.values().length)]);
			case 6 -> builder.penalty(PENALTIES[random.nextInt(PENALTIES.length)]);
			case 5 -> {
				return (specs.size() == 1) ? List.of(spec, randomSpec(random)) : List.of(specs.get(1));
			}
			default -> {
				return List.of(randomSpec(random));
			}
		}
		LimitSpec next;
		try {
			next = builder.build();
		}
		catch (IllegalArgumentException ex) {
			// A combination LimitSpec refuses (segments shorter than 1ms): no change.
			return specs;
		}
		List<LimitSpec> result = new ArrayList<>(specs);
		result.set(0, next);
		return List.copyOf(result);
	}

	/**
	 * A token bucket, GCRA or leaky bucket whose emission interval is rarely a whole
	 * number of microseconds: limits from 3 to one per nanosecond (primes among them),
	 * windows from 1 ms to a year, bursts from 1 to the largest {@link LimitSpec}
	 * accepts.
	 */
	static LimitSpec randomBucket(Random random) {
		Algorithm[] buckets = { Algorithm.TOKEN_BUCKET, Algorithm.GCRA, Algorithm.LEAKY_BUCKET };
		Duration[] windows = { Duration.ofMillis(1), Duration.ofSeconds(1), Duration.ofHours(1), Duration.ofDays(1),
				Duration.ofDays(365) };
		while (true) {
			Duration window = windows[random.nextInt(windows.length)];
			long nanos = window.toNanos();
			long limit = switch (random.nextInt(4)) {
				case 0 -> new long[] { 3, 7, 999_983, 1_000_000_007L }[random.nextInt(4)];
				case 1 -> 1 + (long) (random.nextDouble() * Math.min(LimitSpec.MAX_LIMIT, nanos));
				case 2 -> Math.min(LimitSpec.MAX_LIMIT, nanos) - random.nextInt(1000);
				default -> 1 + random.nextInt(1000);
			};
			long largestBurst = Math.min(LimitSpec.MAX_LIMIT, (1L << 53) / Math.max(1, nanos / Math.max(1, limit)));
			long burst = switch (random.nextInt(3)) {
				case 0 -> 1 + random.nextInt(5);
				case 1 -> largestBurst;
				default -> 1 + (long) (random.nextDouble() * largestBurst);
			};
			try {
				return LimitSpec.builder()
					.algorithm(buckets[random.nextInt(buckets.length)])
					.limit(limit)
					.window(window)
					.burst(burst)
					.build();
			}
			catch (IllegalArgumentException ex) {
				// A combination LimitSpec refuses: draw again.
			}
		}
	}

	/** One change of a bucket: its limit, window or burst, or a new bucket. */
	static List<LimitSpec> changedBucket(Random random, List<LimitSpec> specs) {
		LimitSpec spec = specs.get(0);
		LimitSpec drawn = randomBucket(random);
		LimitSpec.Builder builder = spec.toBuilder();
		switch (random.nextInt(4)) {
			case 0 -> builder.limit(drawn.limit());
			case 1 -> builder.window(drawn.window());
			case 2 -> builder.burst(drawn.burst());
			default -> {
				return List.of(drawn);
			}
		}
		try {
			return List.of(builder.build());
		}
		catch (IllegalArgumentException ex) {
			// A combination LimitSpec refuses: no change.
			return specs;
		}
	}

	static long bucketCost(Random random, LimitSpec spec) {
		return switch (random.nextInt(8)) {
			case 0 -> spec.burst();
			case 1 -> spec.burst() + 1;
			case 2, 3 -> 1 + (long) (random.nextDouble() * spec.burst());
			default -> 1 + random.nextInt((int) Math.min(3, spec.burst()));
		};
	}

	/** Nothing, a microsecond, a few permits' time, or up to the whole refill time. */
	static void advanceBucket(ManualTimeSource time, Random random, LimitSpec spec) {
		double permit = (double) spec.windowMicros() / spec.limit();
		double refill = permit * spec.burst();
		long advance = switch (random.nextInt(8)) {
			case 0, 1 -> 0;
			case 2 -> 1;
			case 3, 4 -> (long) (random.nextDouble() * 3 * permit);
			default -> (long) (random.nextDouble() * refill);
		};
		// A refill of the largest bursts takes years: a long trace would carry the clock
		// past 2^53 µs (the year 2255), beyond the times both stores are exact for.
		time.advanceMicros(Math.min(advance, Math.max(0, LATEST - time.nowMicros())));
	}

}
