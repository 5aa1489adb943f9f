package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisSentinelGroup;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sentinel ({@code spring.data.redis.sentinel.*}) on real {@code redis-server} processes:
 * a master, a replica and a Sentinel. Decisions run at a steady pace on a few keys while
 * the master is killed with {@code SIGKILL}; every call answers, decisions return to
 * Redis once the replica is promoted, and the usage from before the kill survives (the
 * replica had it, and the heartbeat's epoch is replicated too, so the starter does not
 * take the promoted replica for a Redis that lost its data). Prints the figures for the
 * README.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisSentinelFailoverTests {

	private static final long LIMIT = 1000;

	/** A limit the test never reaches, counted exactly (no refill, no window edge). */
	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(LIMIT, "1h", Algorithm.SLIDING_LOG));

	private static final List<String> KEYS = List.of("a", "b", "c");

	/** About 20 decisions per second, as in the manual check. */
	private static final long PACE_MILLIS = 50;

	private static final long BACK_ON_REDIS_BOUND_SECONDS = 30;

	private RedisSentinelGroup sentinel;

	@BeforeEach
	void startSentinel() {
		this.sentinel = RedisSentinelGroup.start();
	}

	@AfterEach
	void stopSentinel() {
		this.sentinel.close();
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitHealthContributorAutoConfiguration.class, DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.sentinel.master=" + RedisSentinelGroup.MASTER_NAME,
					"spring.data.redis.sentinel.nodes=" + this.sentinel.sentinelAddress(), "ratelimit.store=redis",
					// The machine is shared and slow: a loaded moment must not count as
					// an outage before the kill.
					"ratelimit.redis.timeout=500ms");
	}

	@Test
	void onLettuceEveryCallAnswersAndDecisionsReturnToThePromotedReplicaWithTheirUsage(CapturedOutput output) {
		this.runner().run((context) -> {
			assertThat(context).hasNotFailed();
			failOver("Lettuce", context.getBean(FailoverRateLimitStore.class));
		});
		assertThat(output).doesNotContain("Redis lost its data");
	}

	@Test
	void onJedisEveryCallAnswersAndDecisionsReturnToThePromotedReplicaWithTheirUsage(CapturedOutput output) {
		this.runner().withClassLoader(new FilteredClassLoader("io.lettuce")).run((context) -> {
			assertThat(context).hasNotFailed();
			failOver("Jedis", context.getBean(FailoverRateLimitStore.class));
		});
		assertThat(output).doesNotContain("Redis lost its data");
	}

	private void failOver(String client, FailoverRateLimitStore store) {
		assertThat(((RedisRateLimitStore) store.primary()).isStarted()).isTrue();
		int masterPort = this.sentinel.master().port();
		assertThat(this.sentinel.currentMasterPort()).isEqualTo(masterPort);
		Counts counts = new Counts();
		// Before the kill: every decision on Redis.
		for (int i = 0; i < 30; i++) {
			assertThat(counts.decide(store, KEYS.get(i % KEYS.size()))).as("decision %d before the kill", i)
				.isEqualTo(Decision.Origin.STORE);
			pause(PACE_MILLIS);
		}
		long usedBeforeKill = counts.calls[0];
		assertThat(this.sentinel.replica().command("KEYS", "rl:{sentinel:*").lines())
			.as("the usage replicated before the kill")
			.hasSizeGreaterThanOrEqualTo(KEYS.size());

		this.sentinel.killMaster();
		long killed = System.nanoTime();
		long promoted = -1;
		long backOnRedis = -1;
		long deadline = killed + TimeUnit.SECONDS.toNanos(BACK_ON_REDIS_BOUND_SECONDS);
		int i = 0;
		// Until the Sentinel has promoted the replica, a decision has been made on it,
		// and what the fallback admitted meanwhile is written back.
		while (promoted < 0 || backOnRedis < 0 || store.pendingWriteBacks() > 0 || store.isDegraded()) {
			assertThat(System.nanoTime() - deadline)
				.as("%s: decisions back on the promoted replica within %ds of the kill (promoted: %s, decided "
						+ "there: %s, write-backs pending: %d)", client, BACK_ON_REDIS_BOUND_SECONDS, promoted >= 0,
						backOnRedis >= 0, store.pendingWriteBacks())
				.isNegative();
			Decision.Origin origin = counts.decide(store, KEYS.get(i++ % KEYS.size()));
			long now = System.nanoTime();
			if (backOnRedis < 0 && origin == Decision.Origin.STORE) {
				backOnRedis = now;
			}
			if (promoted < 0 && promotedNow(masterPort)) {
				promoted = System.nanoTime();
			}
			pause(PACE_MILLIS);
		}
		assertThat(this.sentinel.currentMasterPort()).isEqualTo(this.sentinel.replica().port());
		// A few more at the same pace: the switch is for good.
		for (int j = 0; j < 20; j++) {
			assertThat(counts.decide(store, KEYS.get(i++ % KEYS.size()))).as("decision %d after the switch", j)
				.isEqualTo(Decision.Origin.STORE);
			pause(PACE_MILLIS);
		}

		assertThat(counts.failed).as("calls that threw").isZero();
		Decision peek = store.peek("sentinel", KEYS.get(0), LIMITS);
		assertThat(peek.origin()).isEqualTo(Decision.Origin.STORE);
		long used = LIMIT - peek.remaining();
		System.out.printf(
				"sentinel (%s): master killed; replica promoted %d ms after the kill; first decision on Redis "
						+ "%d ms after the kill (%+d ms from the promotion seen on the Sentinel); %d of %d calls "
						+ "answered (%d by the fallback), %d failed; key a: %d calls (%d before the kill), "
						+ "Redis counts %d used after the write-back%n",
				client, TimeUnit.NANOSECONDS.toMillis(promoted - killed),
				TimeUnit.NANOSECONDS.toMillis(backOnRedis - killed),
				TimeUnit.NANOSECONDS.toMillis(backOnRedis - promoted), counts.answered, counts.total, counts.fallback,
				counts.failed, counts.calls[0], usedBeforeKill, used);
		assertThat(used).as("key a's usage did not restart from a full limit (%d used before the kill)", usedBeforeKill)
			.isGreaterThanOrEqualTo(usedBeforeKill);
		// Every call on key a was admitted (the limit is far): Redis counts each once,
		// those decided by the fallback through its write-back; a call whose script ran
		// on the old master just before the kill but whose write had not reached the
		// replica yet may be missing (asynchronous replication).
		assertThat(used).as("key a: %d calls in all", counts.calls[0]).isLessThanOrEqualTo(counts.calls[0]);
	}

	private boolean promotedNow(int oldMasterPort) {
		try {
			return this.sentinel.currentMasterPort() != oldMasterPort;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	private static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** What the calls did: answered, by whom, or thrown. */
	private static final class Counts {

		private final long[] calls = new long[KEYS.size()];

		private long total;

		private long answered;

		private long fallback;

		private long failed;

		/**
		 * Decides one call and counts what happened; a call that throws is counted, not
		 * rethrown, so the run goes on and the count is asserted at the end.
		 * @return who decided, or {@code null} when the call threw
		 */
		Decision.@Nullable Origin decide(FailoverRateLimitStore store, String key) {
			this.total++;
			this.calls[KEYS.indexOf(key)]++;
			Decision decision;
			try {
				decision = store.decide("sentinel", key, LIMITS, 1);
			}
			catch (RuntimeException ex) {
				this.failed++;
				ex.printStackTrace();
				return null;
			}
			this.answered++;
			if (decision.origin() == Decision.Origin.FALLBACK) {
				this.fallback++;
			}
			assertThat(decision.allowed()).as("the limit is not reached: %s", decision).isTrue();
			return decision.origin();
		}

	}

}
