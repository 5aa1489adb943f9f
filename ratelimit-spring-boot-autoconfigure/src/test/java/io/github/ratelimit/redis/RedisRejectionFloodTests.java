package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A flood on one key against a real Redis, through the store the auto-configuration
 * builds: the limit holds exactly, rejections after the first cost no Redis call, and a
 * refund or reset in the middle of the flood is seen at once.
 */
class RedisRejectionFloodTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final List<LimitSpec> LIMITS = List.of(LimitSpec.of(5, Duration.ofHours(1), Algorithm.SLIDING_LOG));

	private static final int THREADS = 8;

	private static final int REQUESTS_PER_THREAD = 2_500;

	private RedisClient client;

	private StatefulRedisConnection<String, String> admin;

	private RejectionCache cache;

	private RedisRateLimitStore primary;

	private FailoverRateLimitStore store;

	@BeforeEach
	void createStore() {
		this.client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		this.admin = this.client.connect();
		this.primary = RedisRateLimitStore.builder(this.client).timeout(Duration.ofSeconds(5)).build();
		this.cache = new RejectionCache(1000, RejectionCache.DEFAULT_MAX_AGE);
		this.store = FailoverRateLimitStore.builder(this.primary, InMemoryRateLimitStore.builder().build())
			.failureMode(FailureMode.CLOSED)
			.rejectionCache(this.cache)
			.build();
	}

	@AfterEach
	void close() {
		this.store.close();
		this.admin.close();
		this.client.shutdown();
	}

	@Test
	void aFloodOnOneKeyAdmitsTheLimitAndCostsAlmostNoRedisCalls() throws Exception {
		long scriptCallsBefore = scriptCalls();
		List<Decision> decisions = flood("flood");
		long scriptCalls = scriptCalls() - scriptCallsBefore;
		long admitted = decisions.stream().filter(Decision::allowed).count();
		long rejected = decisions.size() - admitted;
		assertThat(admitted).isEqualTo(5);
		assertThat(rejected).isEqualTo(THREADS * REQUESTS_PER_THREAD - 5);
		// Each thread may ask Redis once while another's rejection is on its way back.
		assertThat(scriptCalls).as("script calls for %d rejections", rejected)
			.isLessThanOrEqualTo((long) (rejected * 0.01));
		// Script calls also count the store's warm-up, and one call decides several
		// requests that arrived together (coalesced): every request Redis did not decide
		// was answered locally.
		long decidedInRedis = scriptCalls + this.primary.coalescedDecisions();
		assertThat(this.cache.answered()).isGreaterThanOrEqualTo(THREADS * REQUESTS_PER_THREAD - decidedInRedis);
		assertThat(decisions).filteredOn((decision) -> !decision.allowed())
			.allSatisfy((decision) -> assertThat(decision.retryAfterMicros()).isPositive()
				.isLessThanOrEqualTo(Duration.ofHours(1).toNanos() / 1000));
	}

	@Test
	void aResetInTheMiddleOfAFloodIsSeenAtOnce() throws Exception {
		flood("reset");
		this.store.reset("flood", "reset", LIMITS);
		assertThat(this.store.decide("flood", "reset", LIMITS, 1).allowed()).isTrue();
		List<Decision> again = flood("reset");
		assertThat(again.stream().filter(Decision::allowed).count()).as("the rest of the fresh limit").isEqualTo(4);
	}

	@Test
	void aRefundInTheMiddleOfAFloodIsSeenAtOnce() throws Exception {
		Decision first = this.store.decide("flood", "refund", LIMITS, 1);
		List<Decision> decisions = flood("refund");
		assertThat(decisions.stream().filter(Decision::allowed).count()).isEqualTo(4);
		this.store.refund("flood", "refund", LIMITS, 1, first);
		assertThat(this.store.decide("flood", "refund", LIMITS, 1).allowed()).isTrue();
		assertThat(this.store.decide("flood", "refund", LIMITS, 1).allowed()).isFalse();
	}

	private List<Decision> flood(String key) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try {
			List<Callable<List<Decision>>> tasks = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				tasks.add(() -> {
					List<Decision> decisions = new ArrayList<>(REQUESTS_PER_THREAD);
					for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
						decisions.add(this.store.decide("flood", key, LIMITS, 1));
					}
					return decisions;
				});
			}
			List<Decision> all = new ArrayList<>();
			for (Future<List<Decision>> result : executor.invokeAll(tasks)) {
				all.addAll(result.get());
			}
			return all;
		}
		finally {
			executor.shutdownNow();
		}
	}

	private long scriptCalls() {
		long calls = 0;
		Matcher matcher = Pattern.compile("cmdstat_(?:evalsha|eval):calls=(\\d+)")
			.matcher(this.admin.sync().info("commandstats"));
		while (matcher.find()) {
			calls += Long.parseLong(matcher.group(1));
		}
		return calls;
	}

}
