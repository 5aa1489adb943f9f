package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.redis.time-source: local} with two instances whose clocks differ by
 * 400 ms, on a real Redis: two stores on one key, each with its own clock. A fixed window
 * of 10 per second admits at most 10 per window of the shared key (the windows follow the
 * clock ahead), so at most 10 in the first 600 ms of any second of the clock behind and
 * at most 20 in any of its seconds; no algorithm admits more over a run than its limit
 * explains plus one limit for the skew.
 */
class RedisClockSkewTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final long SKEW = TimeUnit.MILLISECONDS.toMicros(400);

	private static final long SECOND = TimeUnit.SECONDS.toMicros(1);

	private static final long STEP = TimeUnit.MILLISECONDS.toMicros(50);

	/** Five seconds in 50 ms steps. */
	private static final int STEPS = 100;

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
	void close() {
		this.stores.forEach(RedisRateLimitStore::close);
	}

	private RedisRateLimitStore store(String prefix, TimeSource time) {
		// A manual clock runs ahead of Redis's: keys must outlive their real TTL.
		return store(prefix, time, Duration.ofMinutes(10));
	}

	private RedisRateLimitStore store(String prefix, TimeSource time, Duration expirySlack) {
		RedisRateLimitStore store = RedisRateLimitStore.builder(client)
			.keyPrefix(prefix)
			.timeSource(time)
			.expirySlack(expirySlack)
			.timeout(Duration.ofSeconds(5))
			.connectTimeout(Duration.ofSeconds(30))
			.build();
		this.stores.add(store);
		return store;
	}

	@Test
	void aFixedWindowOfTenPerSecondAdmitsTenPerWindowUnderA400msSkew() {
		// Admissions per second of the clock behind: those in its first 600 ms, and in
		// all.
		TreeMap<Long, long[]> perSecond = new TreeMap<>();
		run("skew-fw", Algorithm.FIXED_WINDOW, (now) -> {
			long[] counts = perSecond.computeIfAbsent(now / SECOND, (second) -> new long[2]);
			counts[1]++;
			if (now % SECOND < SECOND - SKEW) {
				counts[0]++;
			}
		});
		long total = perSecond.values().stream().mapToLong((counts) -> counts[1]).sum();
		System.out.println("Fixed window 10/s, clocks 400 ms apart, 5 s: admitted " + total + "; per second of the "
				+ "clock behind (first 600 ms/all): "
				+ perSecond.values().stream().map((counts) -> counts[0] + "/" + counts[1]).toList());
		assertThat(perSecond.values()).allSatisfy((counts) -> {
			assertThat(counts[0]).isLessThanOrEqualTo(10);
			assertThat(counts[1]).isLessThanOrEqualTo(20);
		});
		// Five seconds of the clock behind, and one window the clock ahead opened early.
		assertThat(total).isLessThanOrEqualTo(60);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void noAlgorithmAdmitsMoreThanItsLimitExplainsPlusOneLimitUnderA400msSkew(Algorithm algorithm) {
		long[] admitted = new long[1];
		run("skew-" + algorithm.name().toLowerCase(), algorithm, (now) -> admitted[0]++);
		System.out.println(algorithm + " 10/s, clocks 400 ms apart, 5 s: admitted " + admitted[0]);
		// 10 per second for 5 s, one limit (a window or a burst) at the start, and one
		// for the skew.
		assertThat(admitted[0]).isLessThanOrEqualTo(70);
	}

	/**
	 * Runs two instances 400 ms apart on one key with a limit of 10 per second, each
	 * trying 2 requests every 50 ms for 5 s, taking the lead in turn (a caller behind
	 * must not reset what the one ahead counted, nor the other way round).
	 * @param admitted told the time of the clock behind at each admission
	 */
	private void run(String prefix, Algorithm algorithm, LongConsumer admitted) {
		ManualTimeSource behind = new ManualTimeSource(1_000 * SECOND);
		RedisRateLimitStore slow = store(prefix, behind);
		RedisRateLimitStore fast = store(prefix, () -> behind.nowMicros() + SKEW);
		List<LimitSpec> limits = List.of(LimitSpec.of(10, Duration.ofSeconds(1), algorithm));
		for (int step = 0; step < STEPS; step++) {
			RedisRateLimitStore first = (step % 2 == 0) ? slow : fast;
			RedisRateLimitStore second = (first == slow) ? fast : slow;
			for (RedisRateLimitStore store : List.of(first, second, first, second)) {
				if (store.decide(prefix, "k", limits, 1).allowed()) {
					admitted.accept(behind.nowMicros());
				}
			}
			behind.advanceMicros(STEP);
		}
	}

	@Test
	void aFixedWindowKeyOutlivesTheWindowOfTheClockAhead() throws InterruptedException {
		// Real clocks, 4 s apart on 10 s windows: the clock ahead fills its window just
		// before that window ends, and its key, without the skew's extra window, would
		// expire while the clock behind is still in the same window.
		long window = 10 * SECOND;
		long[] shift = new long[1];
		TimeSource ahead = () -> TimeSource.system().nowMicros() + shift[0];
		TimeSource behindClock = () -> ahead.nowMicros() - 4 * SECOND;
		// Real clocks: keys expire as in production.
		RedisRateLimitStore fast = store("skew-ttl", ahead, Duration.ZERO);
		RedisRateLimitStore slow = store("skew-ttl", behindClock, Duration.ZERO);
		fast.start();
		slow.start();
		// The clock ahead is 2 s before the end of one of its windows (time enough for
		// its 10 calls), the clock behind 6 s.
		long realNow = TimeSource.system().nowMicros();
		shift[0] = (window - 2 * SECOND) - Math.floorMod(realNow, window);
		List<LimitSpec> limits = List.of(LimitSpec.of(10, Duration.ofSeconds(10), Algorithm.FIXED_WINDOW));
		long window0 = ahead.nowMicros() / window;
		int admitted = 0;
		for (int i = 0; i < 10; i++) {
			admitted += fast.decide("skew-ttl", "k", limits, 1).allowed() ? 1 : 0;
		}
		// Wait (generously) until the clock ahead has left that window by 200 ms.
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (ahead.nowMicros() < (window0 + 1) * window + 200_000 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		// The clock behind is still in that window (by 1.8 s): it counts into it.
		assertThat(behindClock.nowMicros() / window).isEqualTo(window0);
		for (int i = 0; i < 10; i++) {
			admitted += slow.decide("skew-ttl", "k", limits, 1).allowed() ? 1 : 0;
		}
		assertThat(admitted).isEqualTo(10);
	}

	@Test
	void aSlidingLogStaysInOrderWhenACallerIsBehind() {
		ManualTimeSource behind = new ManualTimeSource(1_000 * SECOND);
		RedisRateLimitStore slow = store("skew-sl", behind);
		RedisRateLimitStore fast = store("skew-sl", () -> behind.nowMicros() + SKEW);
		List<LimitSpec> limits = List.of(LimitSpec.of(10, Duration.ofSeconds(1), Algorithm.SLIDING_LOG));
		for (RedisRateLimitStore store : List.of(fast, slow, fast, slow)) {
			assertThat(store.decide("skew-sl", "k", limits, 2).allowed()).isTrue();
			behind.advanceMicros(STEP);
		}
		String key = redis.server().command("KEYS", "skew-sl:*").trim();
		List<Long> times = redis.server().command("LRANGE", key, "0", "-1").lines().map(Long::parseLong).toList();
		// Oldest first, and none older than what the caller ahead recorded before it.
		assertThat(times).hasSize(8).isSorted();
		assertThat(times.get(2)).isEqualTo(times.get(0));
		// A permit the caller behind took is not forgotten earlier than the one before
		// it.
		assertThat(slow.decide("skew-sl", "k", limits, 3).allowed()).isFalse();
	}

}
