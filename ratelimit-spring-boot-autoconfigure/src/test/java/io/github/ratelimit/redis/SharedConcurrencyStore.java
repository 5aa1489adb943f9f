package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.Holders;

/**
 * One Redis store for every test of a concurrency contract class, on the clock of the
 * test that runs: a connection per test would cost more than the tests. Not closeable, so
 * the suite does not close it; the class closes {@link #close()} once.
 */
final class SharedConcurrencyStore implements ConcurrencyStore {

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
			// real-time
			// TTL. Semantics, not latency: generous timeouts on a shared machine.
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

}
