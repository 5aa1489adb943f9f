package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
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
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.concurrency.OnStoreFailure;
import io.github.ratelimit.failover.FailoverRateLimitStore;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request limited by the rate and the concurrency of one bucket, through the store the
 * application gets (Redis behind its failure mode): one script call takes the permit and
 * decides, one more gives the permit back. Counted by the Redis server of this class,
 * which nothing else calls.
 */
class RedisRateAndConcurrencyCallsTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private RedisClient client;

	private StatefulRedisConnection<String, String> admin;

	private RedisRateLimitStore store;

	private FailoverRateLimitStore failover;

	private final LeaseRenewer renewer = new LeaseRenewer();

	@BeforeEach
	void connect() {
		this.client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		this.admin = this.client.connect();
		this.store = RedisRateLimitStore.builder(this.client).timeout(Duration.ofSeconds(5)).build();
		this.failover = new FailoverRateLimitStore(this.store, InMemoryRateLimitStore.create(), FailureMode.FALLBACK);
	}

	@AfterEach
	void close() {
		this.renewer.close();
		this.failover.close();
		this.admin.close();
		this.client.shutdown();
	}

	@Test
	void eachRequestIsOneScriptCallAndItsReleaseAnother() {
		Bucket reports = Bucket.of("reports", LimitSpec.of(150, "1h", Algorithm.SLIDING_WINDOW));
		ConcurrencyLimiter limiter = new ConcurrencyLimiter(this.store, "reports",
				new ConcurrencyLimit(2, Duration.ofMinutes(5)), this.renewer, List.of(), OnStoreFailure.LOCAL);
		Acquirer acquirer = Acquirer.builder(this.failover).build();
		// Warm: the script loaded, the connection made.
		acquirer.acquireHolding(PermitRequest.of(reports, "warm", 1), limiter).permit().release();
		long before = evalshaCalls();
		int granted = 0;
		for (int i = 0; i < 200; i++) {
			Acquirer.Holding holding = acquirer.acquireHolding(PermitRequest.of(reports, "acme", 1), limiter);
			if (holding.acquisition() != null && holding.acquisition().granted()) {
				granted++;
			}
			holding.permit().release();
		}
		long calls = evalshaCalls() - before;
		assertThat(granted).isEqualTo(150);
		// 150 granted: a call and a release each; 50 rejected by the rate limit: a call,
		// holding nothing to release.
		assertThat(calls).isEqualTo(150 * 2 + 50);
		assertThat(this.store.holders("reports", "acme").count()).isZero();
	}

	private long evalshaCalls() {
		Matcher calls = Pattern.compile("cmdstat_evalsha:calls=(\\d+)").matcher(this.admin.sync().info("commandstats"));
		return calls.find() ? Long.parseLong(calls.group(1)) : 0;
	}

}
