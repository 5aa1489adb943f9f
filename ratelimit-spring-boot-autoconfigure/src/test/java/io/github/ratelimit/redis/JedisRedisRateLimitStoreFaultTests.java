package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStoreException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault tests of {@link RedisRateLimitStoreFaultTests} (Redis stalled with
 * {@code DEBUG SLEEP}, paused, stopped, restarted, its scripts flushed) on Jedis, through
 * Spring Data Redis: the same timeouts, the same failures, the same recovery.
 */
class JedisRedisRateLimitStoreFaultTests extends RedisRateLimitStoreFaultTests {

	/** The application's factory: each store makes its own from its settings. */
	private static JedisConnectionFactory connectionFactory;

	@BeforeAll
	static void jedis() {
		connectionFactory = new JedisConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()));
	}

	@Override
	protected RedisRateLimitStore.Builder builder() {
		return RedisRateLimitStore.builder(connectionFactory);
	}

	@Override
	protected RedisRateLimitStore.Builder anotherInstanceBuilder() {
		return builder();
	}

	@Test
	void asynchronousCallsRunOffTheCallersThreadAndTimeOutThere() throws Exception {
		RedisRateLimitStore store = builder().keyPrefix("async").timeout(Duration.ofSeconds(2)).build();
		try {
			store.start(Duration.ofSeconds(5));
			List<LimitSpec> limits = List.of(LimitSpec.of(5, "1h", Algorithm.TOKEN_BUCKET));
			redis.server().pause();
			try {
				CompletableFuture<Decision> decision = store.decideAsync("async", "k", limits, 1, Long.MAX_VALUE)
					.toCompletableFuture();
				assertThat(decision).as("returned while Redis cannot answer").isNotDone();
				AtomicReference<Thread> completedOn = new AtomicReference<>();
				CompletableFuture<Throwable> failure = decision.handle((result, ex) -> {
					completedOn.set(Thread.currentThread());
					return ScriptRunner.unwrap(ex);
				});
				assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(RateLimitStoreException.class,
						(ex) -> assertThat(ex.isTimeout()).isTrue());
				assertThat(completedOn.get().getName()).startsWith("ratelimit-redis-");
			}
			finally {
				redis.server().resume();
			}
		}
		finally {
			store.close();
		}
	}

}
