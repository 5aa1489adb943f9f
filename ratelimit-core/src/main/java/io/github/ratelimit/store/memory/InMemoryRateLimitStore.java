package io.github.ratelimit.store.memory;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.HeldDecision;
import io.github.ratelimit.concurrency.Holders;
import io.github.ratelimit.concurrency.InMemoryConcurrencyStore;
import io.github.ratelimit.concurrency.RateAndConcurrencyStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreArguments;

/**
 * A {@link RateLimitStore} in the heap of this JVM, with the same semantics as the Redis
 * store. Each {@code (bucket, key)} has its own immutable state in a Caffeine map; the
 * store only loads, stores and expires it, and the algorithms
 * ({@link io.github.ratelimit.algorithm.LimitState}) compute the next one. A state is
 * replaced by compare-and-set, without any lock, so unrelated keys never contend and
 * threads on one key retry rather than queue. A decision on a key already held reads the
 * map and writes nothing to it; the map is written when a key is created, and at most
 * about once a second per busy key to extend how long it is held.
 * <p>
 * It keeps the permits of concurrency limits too ({@link InMemoryConcurrencyStore}), so
 * that a request limited by the rate and the concurrency of one bucket is decided in one
 * step ({@link RateAndConcurrencyStore}).
 * <p>
 * Bounded: at most {@code maxKeys} keys are held (Caffeine evicts by size with W-TinyLFU,
 * which keeps frequently used keys over a flood of one-off keys), and every entry expires
 * on its own once it can no longer matter: at most its lifetime (the window; twice the
 * window for the sliding window; the burst interval for the bucket algorithms and GCRA)
 * plus one second after its last decision, and never while its state differs from a fresh
 * one. A request rejected on an unknown key leaves nothing behind. Keys longer than
 * {@value #MAX_RAW_KEY_LENGTH} characters are stored as their SHA-256 digest.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InMemoryRateLimitStore implements RateLimitStore, ConcurrencyStore, RateAndConcurrencyStore {

	/** Keys longer than this are replaced by their digest, bounding memory per key. */
	public static final int MAX_RAW_KEY_LENGTH = 128;

	/** The default bound on the number of keys held. */
	public static final long DEFAULT_MAX_KEYS = 1_000_000L;

	/** One in this many uses of a key is recorded by the map's eviction policy. */
	private static final int USE_SAMPLE = 32;

	private final Cache<StateKey, KeyState> states;

	private final Policy<StateKey, KeyState> policy;

	private final StoreClock clock;

	/** The permits of concurrency limits, on the same clock. */
	private final InMemoryConcurrencyStore permits;

	private InMemoryRateLimitStore(Builder builder) {
		this.clock = new StoreClock(builder.timeSource);
		this.permits = new InMemoryConcurrencyStore(builder.timeSource);
		Caffeine<StateKey, KeyState> caffeine = Caffeine.newBuilder()
			.maximumSize(builder.maxKeys)
			.ticker(this.clock)
			.expireAfter(new StateExpiry())
			.evictionListener((@Nullable StateKey key, @Nullable KeyState state, RemovalCause cause) -> {
				if (state != null) {
					state.retire();
				}
			});
		caffeine.executor(builder.executor);
		this.states = caffeine.build();
		this.policy = this.states.policy();
	}

	/**
	 * Creates a store with the {@link TimeSource#monotonic() monotonic clock} and
	 * {@value #DEFAULT_MAX_KEYS} keys at most.
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
		StateKey id = StateKey.of(bucket, key);
		KeyState held = lookUp(id);
		if (held != null) {
			Decision decision = held.decideIfHeld(limits, this.clock.nowMicros(), cost, maxDelayMicros);
			if (decision != null) {
				return decision;
			}
		}
		Decision[] result = new Decision[1];
		this.states.asMap().compute(id.stored(), (k, state) -> {
			KeyState current = (state != null) ? state : new KeyState();
			result[0] = current.decideAndHold(limits, this.clock.nowMicros(), cost, maxDelayMicros);
			// A state as good as fresh (e.g. after a rejection on a new key) is not worth
			// keeping.
			return current.isRetired() ? null : current;
		});
		return result[0];
	}

	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		StoreArguments.check(bucket, key, limits, cost);
		StateKey id = StateKey.of(bucket, key);
		KeyState held = lookUp(id);
		if (held != null && held.refundIfHeld(limits, this.clock.nowMicros(), cost)) {
			return;
		}
		this.states.asMap().computeIfPresent(id, (k, state) -> {
			state.refundAndHold(limits, this.clock.nowMicros(), cost);
			return state.isRetired() ? null : state;
		});
	}

	@Override
	public void charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		chargeAndHold(bucket, key, limits, costs, false);
	}

	@Override
	public boolean restore(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		return chargeAndHold(bucket, key, limits, costs, true);
	}

	@Override
	public long owe(String bucket, String key, List<LimitSpec> limits, long permits) {
		StoreArguments.check(bucket, key, limits, permits);
		long[] owed = new long[1];
		this.states.asMap().compute(StateKey.of(bucket, key).stored(), (k, state) -> {
			KeyState current = (state != null) ? state : new KeyState();
			owed[0] = current.oweAndHold(limits, this.clock.nowMicros(), permits);
			return current.isRetired() ? null : current;
		});
		return owed[0];
	}

	private boolean chargeAndHold(String bucket, String key, List<LimitSpec> limits, long[] costs,
			boolean onlyIfFresh) {
		StoreArguments.check(bucket, key, limits, costs);
		boolean[] charged = new boolean[1];
		this.states.asMap().compute(StateKey.of(bucket, key).stored(), (k, state) -> {
			KeyState current = (state != null) ? state : new KeyState();
			charged[0] = current.chargeAndHold(limits, this.clock.nowMicros(), costs, onlyIfFresh);
			return current.isRetired() ? null : current;
		});
		return charged[0];
	}

	@Override
	public Decision peek(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		StateKey id = StateKey.of(bucket, key);
		KeyState held = lookUp(id);
		if (held != null) {
			Decision decision = held.peekIfHeld(limits, this.clock.nowMicros());
			if (decision != null) {
				return decision;
			}
		}
		Decision[] result = new Decision[1];
		this.states.asMap().computeIfPresent(id, (k, state) -> {
			result[0] = state.peekAndHold(limits, this.clock.nowMicros());
			return state.isRetired() ? null : state;
		});
		return (result[0] != null) ? result[0] : new KeyState().peekAndHold(limits, this.clock.nowMicros());
	}

	/**
	 * Reads a key's state without telling the map about every use: a use recorded by the
	 * map wakes its housekeeping thread every few reads, which costs more than the
	 * decision. One use in {@value #USE_SAMPLE} ({@link KeyState#sampleUse}) still tells
	 * the eviction policy which keys are busy.
	 */
	private @Nullable KeyState lookUp(StateKey id) {
		KeyState state = this.policy.getIfPresentQuietly(id);
		if (state != null && state.sampleUse(USE_SAMPLE)) {
			this.states.getIfPresent(id.stored());
		}
		return state;
	}

	@Override
	public void reset(String bucket, String key, List<LimitSpec> limits) {
		StoreArguments.check(bucket, key, limits);
		this.states.asMap().computeIfPresent(StateKey.of(bucket, key), (k, state) -> {
			state.resetAndHold(limits, this.clock.nowMicros());
			return state.isRetired() ? null : state;
		});
	}

	@Override
	public ConcurrencyDecision acquire(String bucket, String key, ConcurrencyLimit limit, String holder) {
		return this.permits.acquire(bucket, key, limit, holder);
	}

	@Override
	public boolean renew(String bucket, String key, ConcurrencyLimit limit, String holder) {
		return this.permits.renew(bucket, key, limit, holder);
	}

	@Override
	public boolean release(String bucket, String key, String holder) {
		return this.permits.release(bucket, key, holder);
	}

	@Override
	public Holders holders(String bucket, String key) {
		return this.permits.holders(bucket, key);
	}

	@Override
	public int releaseAll(String bucket, String key) {
		return this.permits.releaseAll(bucket, key);
	}

	@Override
	public @Nullable HeldDecision decideHolding(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, ConcurrencyStore permits, ConcurrencyLimit limit, String holder, boolean enforced) {
		if (permits != this) {
			return null;
		}
		return this.permits.decideHolding(this, bucket, key, limits, cost, maxDelayMicros, limit, holder, enforced);
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
		this.clock.nowMicros();
		this.states.cleanUp();
		return this.states.estimatedSize();
	}

	/**
	 * Forgets every key.
	 */
	public void clear() {
		for (StateKey id : this.states.asMap().keySet()) {
			this.states.asMap().computeIfPresent(id, InMemoryRateLimitStore::retire);
		}
	}

	private static @Nullable KeyState retire(StateKey id, KeyState state) {
		state.retire();
		return null;
	}

	/**
	 * The identity of one key's state. Not a record: its generated {@code equals} and
	 * {@code hashCode} showed up in profiles of the hot path.
	 */
	private static final class StateKey {

		private final String bucket;

		private final String key;

		private final int hash;

		private StateKey(String bucket, String key) {
			this(bucket, key, 31 * bucket.hashCode() + key.hashCode());
		}

		private StateKey(String bucket, String key, int hash) {
			this.bucket = bucket;
			this.key = key;
			this.hash = hash;
		}

		static StateKey of(String bucket, String key) {
			boolean digest = key.length() > MAX_RAW_KEY_LENGTH || (!key.isEmpty() && key.charAt(0) == KeyDigest.MARKER);
			return new StateKey(bucket, digest ? KeyDigest.digest(key) : key);
		}

		/**
		 * Returns a copy of this key for the map to keep or record. A key that only looks
		 * a state up never leaves the decision, which lets the compiler keep it off the
		 * heap: on the hot path a decision allocates no key.
		 */
		StateKey stored() {
			return new StateKey(this.bucket, this.key, this.hash);
		}

		@Override
		public boolean equals(@Nullable Object other) {
			if (this == other) {
				return true;
			}
			return (other instanceof StateKey that) && this.hash == that.hash && this.key.equals(that.key)
					&& this.bucket.equals(that.bucket);
		}

		@Override
		public int hashCode() {
			return this.hash;
		}

	}

	/**
	 * Expires each entry when the state's hold ends.
	 */
	private static final class StateExpiry implements Expiry<StateKey, KeyState> {

		@Override
		public long expireAfterCreate(StateKey key, KeyState state, long currentTime) {
			return state.nanosHeldAfter(currentTime);
		}

		@Override
		public long expireAfterUpdate(StateKey key, KeyState state, long currentTime, long currentDuration) {
			return state.nanosHeldAfter(currentTime);
		}

		@Override
		public long expireAfterRead(StateKey key, KeyState state, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

	/**
	 * Builds an {@link InMemoryRateLimitStore}.
	 */
	public static final class Builder {

		private long maxKeys = DEFAULT_MAX_KEYS;

		private TimeSource timeSource = TimeSource.monotonic();

		private Executor executor = Runnable::run;

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
		 * Sets the clock; {@link TimeSource#monotonic()} by default.
		 * @param timeSource the clock
		 * @return this builder
		 */
		public Builder timeSource(TimeSource timeSource) {
			this.timeSource = Objects.requireNonNull(timeSource, "'timeSource' must not be null");
			return this;
		}

		/**
		 * Sets the executor for eviction and expiry housekeeping. By default the thread
		 * whose decision calls for it runs it ({@code Runnable::run}), a little at a
		 * time: on Caffeine's default, the common pool, housekeeping waits whenever that
		 * pool is busy (a parallelism of 1 on two cores), and meanwhile the map drops the
		 * uses it samples, so a flood of new keys could evict a busy key's state (seen in
		 * a test of a million rotating keys); waking a pool thread also cost a sixth of a
		 * decision on one key.
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
