package io.github.ratelimit.store.memory;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreArguments;

/**
 * A {@link RateLimitStore} in the heap of this JVM, with the same semantics as the Redis
 * store. Each {@code (bucket, key)} has its own state, updated under that entry's lock (a
 * {@code compute} on a Caffeine map), so unrelated keys never contend and no global lock
 * exists.
 * <p>
 * Bounded: at most {@code maxKeys} keys are held (Caffeine evicts by size with W-TinyLFU,
 * which keeps frequently used keys over a flood of one-off keys), and every entry expires
 * on its own at the moment its state becomes equal to a fresh one, so idle keys cost
 * nothing. Keys longer than {@value #MAX_RAW_KEY_LENGTH} characters are stored as their
 * SHA-256 digest.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

	/** Keys longer than this are replaced by their digest, bounding memory per key. */
	public static final int MAX_RAW_KEY_LENGTH = 128;

	/** The default bound on the number of keys held. */
	public static final long DEFAULT_MAX_KEYS = 1_000_000L;

	private final Cache<StateKey, KeyState> states;

	private final TimeSource timeSource;

	private InMemoryRateLimitStore(Builder builder) {
		this.timeSource = builder.timeSource;
		TimeSource time = builder.timeSource;
		Caffeine<StateKey, KeyState> caffeine = Caffeine.newBuilder()
			.maximumSize(builder.maxKeys)
			.ticker(new MicrosTicker(time))
			.expireAfter(new StateExpiry());
		if (builder.executor != null) {
			caffeine.executor(builder.executor);
		}
		this.states = caffeine.build();
	}

	/**
	 * Creates a store with the system clock and {@value #DEFAULT_MAX_KEYS} keys at most.
	 * @return a new store
	 */
	public static InMemoryRateLimitStore create() {
		return builder().build();
	}

	/**
	 * Starts a builder.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		StoreArguments.check(bucket, key, limits, cost);
		Decision[] result = new Decision[1];
		this.states.asMap().compute(StateKey.of(bucket, key), (k, state) -> {
			KeyState current = (state != null) ? state : new KeyState();
			long now = this.timeSource.nowMicros();
			result[0] = current.decide(limits, now, cost, maxDelayMicros);
			// A state as good as fresh (e.g. after a rejection on a new key) is not worth
			// keeping.
			return current.isFreshAt(now) ? null : current;
		});
		return result[0];
	}

	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		StoreArguments.check(bucket, key, limits, cost);
		this.states.asMap().computeIfPresent(StateKey.of(bucket, key), (k, state) -> {
			long now = this.timeSource.nowMicros();
			state.refund(limits, now, cost);
			return state.isFreshAt(now) ? null : state;
		});
	}

	@Override
	public Decision peek(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		Decision[] result = new Decision[1];
		this.states.asMap().computeIfPresent(StateKey.of(bucket, key), (k, state) -> {
			result[0] = state.peek(limits, this.timeSource.nowMicros());
			return state;
		});
		return (result[0] != null) ? result[0] : new KeyState().peek(limits, this.timeSource.nowMicros());
	}

	@Override
	public void reset(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		this.states.invalidate(StateKey.of(bucket, key));
	}

	@Override
	public String name() {
		return "memory";
	}

	/**
	 * Returns the number of keys held, after pending evictions and expiries have run.
	 * @return the number of keys
	 */
	public long size() {
		this.states.cleanUp();
		return this.states.estimatedSize();
	}

	/**
	 * Forgets every key.
	 */
	public void clear() {
		this.states.invalidateAll();
	}

	/**
	 * The identity of one key's state.
	 */
	private record StateKey(String bucket, String key) {

		static StateKey of(String bucket, String key) {
			boolean digest = key.length() > MAX_RAW_KEY_LENGTH || (!key.isEmpty() && key.charAt(0) == KeyDigest.MARKER);
			return new StateKey(bucket, digest ? KeyDigest.digest(key) : key);
		}

	}

	/**
	 * Expires each entry when its state becomes fresh again.
	 */
	private static final class StateExpiry implements Expiry<StateKey, KeyState> {

		@Override
		public long expireAfterCreate(StateKey key, KeyState state, long currentTime) {
			return state.nanosUntilFresh(currentTime);
		}

		@Override
		public long expireAfterUpdate(StateKey key, KeyState state, long currentTime, long currentDuration) {
			return state.nanosUntilFresh(currentTime);
		}

		@Override
		public long expireAfterRead(StateKey key, KeyState state, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

	/**
	 * Caffeine's clock, read from the store's {@link TimeSource} so expiry follows the
	 * same (possibly manual) time as decisions.
	 */
	private record MicrosTicker(TimeSource time) implements Ticker {

		@Override
		public long read() {
			return this.time.nowMicros() * 1000L;
		}

	}

	/**
	 * Builds an {@link InMemoryRateLimitStore}.
	 */
	public static final class Builder {

		private long maxKeys = DEFAULT_MAX_KEYS;

		private TimeSource timeSource = TimeSource.system();

		private @Nullable Executor executor;

		private Builder() {
		}

		/**
		 * Sets the most keys held at once; beyond it the least valuable keys are evicted.
		 * @param maxKeys the bound, at least 1
		 * @return this builder
		 */
		public Builder maxKeys(long maxKeys) {
			if (maxKeys < 1) {
				throw new IllegalArgumentException("maxKeys must be at least 1 but was " + maxKeys);
			}
			this.maxKeys = maxKeys;
			return this;
		}

		/**
		 * Sets the clock; the system clock by default.
		 * @param timeSource the clock
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "'timeSource' must not be null");
			return this;
		}

		/**
		 * Sets the executor for eviction and expiry housekeeping; Caffeine's default (the
		 * common pool) otherwise. {@code Runnable::run} makes housekeeping synchronous.
		 * @param executor the executor
		 * @return this builder
		 */
		public Builder executor(Executor executor) {
			this.executor = Objects.requireNonNull(executor, "'executor' must not be null");
			return this;
		}

		/**
		 * Builds the store.
		 * @return the store
		 */
		public InMemoryRateLimitStore build() {
			return new InMemoryRateLimitStore(this);
		}

	}

}
