package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.HeldDecision;
import io.github.ratelimit.concurrency.Holders;
import io.github.ratelimit.concurrency.RateAndConcurrencyStore;

/**
 * One Redis store for every test of a concurrency contract class, on the clock of the
 * test that runs: a connection per test would cost more than the tests. Not closeable, so
 * the suite does not close it; the class closes {@link #close()} once.
 */
final class SharedConcurrencyStore implements ConcurrencyStore, RateAndConcurrencyStore {

	private final AtomicReference<ManualTimeSource> clock = new AtomicReference<>();

	private final Supplier<RedisRateLimitStore.Builder> builder;

	private volatile RedisRateLimitStore store;

	SharedConcurrencyStore(Supplier<RedisRateLimitStore.Builder> builder) {
		this.builder = builder;
	}

	/** The store, on {@code time} from now on. */
	ConcurrencyStore on(ManualTimeSource time) {
		this.clock.set(time);
		if (this.store == null) {
			// The suite's clock jumps ahead of real time: keys must outlive their
			// real-time TTL. Semantics, not latency: generous timeouts on a shared
			// machine.
			this.store = this.builder.get()
				.timeSource(() -> this.clock.get().nowMicros())
				.expirySlack(Duration.ofMinutes(10))
				.timeout(Duration.ofSeconds(5))
				.build();
		}
		return this;
	}

	/** The store under test, once a test made it. */
	RedisRateLimitStore store() {
		return this.store;
	}

	void close() {
		if (this.store != null) {
			this.store.close();
		}
	}

	@Override
	public ConcurrencyDecision acquire(String bucket, String key, ConcurrencyLimit limit, String holder) {
		return this.store.acquire(bucket, key, limit, holder);
	}

	@Override
	public boolean renew(String bucket, String key, ConcurrencyLimit limit, String holder) {
		return this.store.renew(bucket, key, limit, holder);
	}

	@Override
	public boolean release(String bucket, String key, String holder) {
		return this.store.release(bucket, key, holder);
	}

	@Override
	public Holders holders(String bucket, String key) {
		return this.store.holders(bucket, key);
	}

	@Override
	public int releaseAll(String bucket, String key) {
		return this.store.releaseAll(bucket, key);
	}

	@Override
	public @Nullable HeldDecision decideHolding(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, ConcurrencyStore permits, ConcurrencyLimit limit, String holder, boolean enforced) {
		return this.store.decideHolding(bucket, key, limits, cost, maxDelayMicros,
				(permits == this) ? this.store : permits, limit, holder, enforced);
	}

}
