package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.concurrency.OnStoreFailure;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A concurrency limit through a real Redis that stops answering ({@code SIGSTOP}) and
 * comes back: a permit the instance counted in itself meanwhile moves to Redis at its
 * next renewal, where another instance counts it.
 */
class RedisConcurrencyOutageTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final ConcurrencyLimit TWO = new ConcurrencyLimit(2, Duration.ofSeconds(3));

	private final LeaseRenewer renewer = new LeaseRenewer();

	private RedisClient client;

	private RedisRateLimitStore store;

	private RedisRateLimitStore otherStore;

	@BeforeEach
	void connect() {
		redis.server().flushAll();
		this.client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		this.store = RedisRateLimitStore.builder(this.client).timeout(Duration.ofMillis(200)).build();
		this.otherStore = RedisRateLimitStore.builder(this.client).timeout(Duration.ofSeconds(5)).build();
		this.store.start(Duration.ofSeconds(30));
		this.otherStore.start(Duration.ofSeconds(30));
	}

	@AfterEach
	void close() {
		redis.server().resume();
		this.renewer.close();
		this.store.close();
		this.otherStore.close();
		this.client.shutdown();
	}

	@Test
	void aPermitCountedInTheInstanceWhileRedisWasDownMovesToRedisOnceItIsBack() {
		ConcurrencyLimiter instance = limiter(this.store, OnStoreFailure.LOCAL);
		ConcurrencyLimiter another = limiter(this.otherStore, OnStoreFailure.REJECT);
		redis.server().stop();
		ConcurrencyPermit local;
		try {
			local = instance.tryAcquire("acme");
			assertThat(local.acquired()).as("counted in the instance: Redis refuses connections").isTrue();
		}
		finally {
			redis.server().start();
		}
		// Its next renewal (every second of its 3 s lease) that reaches Redis moves it
		// there.
		RedisClusterMasterLossTests.await(() -> heldInRedis() == 1, Duration.ofSeconds(30));
		ConcurrencyPermit second = another.tryAcquire("acme");
		assertThat(second.acquired()).isTrue();
		assertThat(another.tryAcquire("acme").acquired()).as("another instance counts it: 2 of 2").isFalse();
		assertThat(local.release()).as("released in Redis").isTrue();
		assertThat(second.release()).isTrue();
		assertThat(this.otherStore.holders("exports", "acme").count()).isZero();
	}

	@Test
	void aPermitCountedInTheInstanceWhileRedisStalledLeavesNothingInRedisOnceReleased() {
		ConcurrencyLimiter instance = limiter(this.store, OnStoreFailure.LOCAL);
		ConcurrencyPermit inRedis = instance.tryAcquire("acme");
		assertThat(inRedis.acquired()).isTrue();
		redis.server().pause();
		ConcurrencyPermit local;
		try {
			local = instance.tryAcquire("acme");
			assertThat(local.acquired()).as("its share of 2, less the 1 it holds in Redis").isTrue();
		}
		finally {
			redis.server().resume();
		}
		// The asks that timed out run once Redis wakes up, or the next renewal moves the
		// permit there: either way Redis counts it.
		RedisClusterMasterLossTests.await(() -> heldInRedis() == 2, Duration.ofSeconds(30));
		assertThat(limiter(this.otherStore, OnStoreFailure.REJECT).tryAcquire("acme").acquired())
			.as("another instance counts both")
			.isFalse();
		local.release();
		inRedis.release();
		assertThat(this.otherStore.holders("exports", "acme").count()).as("nothing held until a lease ends").isZero();
	}

	/** The permits Redis holds, or -1 while the other store reconnects. */
	private int heldInRedis() {
		try {
			return this.otherStore.holders("exports", "acme").count();
		}
		catch (RateLimitStoreException ex) {
			return -1;
		}
	}

	private ConcurrencyLimiter limiter(RedisRateLimitStore store, OnStoreFailure onFailure) {
		return new ConcurrencyLimiter(store, "exports", TWO, this.renewer, List.of(), onFailure, () -> 1);
	}

}
