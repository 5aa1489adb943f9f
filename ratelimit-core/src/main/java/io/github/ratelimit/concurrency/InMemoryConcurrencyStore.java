package io.github.ratelimit.concurrency;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreArguments;

/**
 * Keeps the permits of concurrency limits in this JVM: one map of holders to lease ends
 * per key, changed inside the key's map entry, so each operation is atomic. A key is
 * forgotten once no permit of it is held; the leases of a key nobody asks about again
 * stay until it is asked about or {@link #releaseAll released}, which a crash of this JVM
 * does anyway.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InMemoryConcurrencyStore implements ConcurrencyStore {

	private final ConcurrentHashMap<Key, Map<String, Long>> keys = new ConcurrentHashMap<>();

	private final TimeSource time;

	/**
	 * Creates a store on the monotonic clock.
	 */
	public InMemoryConcurrencyStore() {
		this(TimeSource.monotonic());
	}

	/**
	 * Creates a store on a clock.
	 * @param time the clock that decides when leases expire
	 */
	public InMemoryConcurrencyStore(TimeSource time) {
		this.time = Objects.requireNonNull(time, "'time' must not be null");
	}

	@Override
	public ConcurrencyDecision acquire(String bucket, String key, ConcurrencyLimit limit, String holder) {
		Objects.requireNonNull(holder, "'holder' must not be null");
		long now = this.time.nowMicros();
		ConcurrencyDecision[] decision = new ConcurrencyDecision[1];
		this.keys.compute(Key.of(bucket, key), (k, leases) -> {
			Map<String, Long> held = (leases != null) ? leases : new HashMap<>();
			int expired = expire(held, now);
			if (held.containsKey(holder) || held.size() < limit.permits()) {
				held.put(holder, now + limit.leaseMicros());
				decision[0] = new ConcurrencyDecision(true, held.size(), limit.permits(), expired, 0);
			}
			else {
				decision[0] = new ConcurrencyDecision(false, held.size(), limit.permits(), expired,
						nextExpiry(held, now));
			}
			return held.isEmpty() ? null : held;
		});
		return decision[0];
	}

	/**
	 * Decides a request on {@code rates} and takes a permit of {@code key} for it, in one
	 * atomic step of the key, as {@link RateAndConcurrencyStore#decideHolding} describes:
	 * the rate limits are asked while the key's permits are held still, so no other call
	 * sees a permit taken that a rejection then gives back.
	 * @param rates the store of the rate limits
	 * @param bucket the bucket name, of both limits
	 * @param key the key within the bucket
	 * @param limits the rate limits
	 * @param cost the permits the request takes from the rate limits
	 * @param maxDelayMicros the longest leaky bucket delay the caller accepts
	 * @param limit the concurrency limit
	 * @param holder who takes the permit
	 * @param enforced whether a rejection keeps the permit from being taken
	 * @return what was decided
	 */
	public HeldDecision decideHolding(RateLimitStore rates, String bucket, String key, List<LimitSpec> limits,
			long cost, long maxDelayMicros, ConcurrencyLimit limit, String holder, boolean enforced) {
		Objects.requireNonNull(holder, "'holder' must not be null");
		StoreArguments.check(bucket, key, limits, cost);
		long now = this.time.nowMicros();
		HeldDecision[] decided = new HeldDecision[1];
		this.keys.compute(Key.of(bucket, key), (k, leases) -> {
			Map<String, Long> held = (leases != null) ? leases : new HashMap<>();
			int expired = expire(held, now);
			Decision rate;
			if (held.containsKey(holder)) {
				// Asked again after an answer that came too late: the first ask decided.
				rate = allowedAsFar(rates.peek(bucket, key, limits), limits);
			}
			else if (held.size() >= limit.permits()) {
				decided[0] = new HeldDecision(
						new ConcurrencyDecision(false, held.size(), limit.permits(), expired, nextExpiry(held, now)),
						null);
				return held.isEmpty() ? null : held;
			}
			else {
				rate = rates.decide(bucket, key, limits, cost, maxDelayMicros);
			}
			boolean holds = rate.allowed() || !enforced || held.containsKey(holder);
			if (holds) {
				held.put(holder, now + limit.leaseMicros());
			}
			decided[0] = new HeldDecision(new ConcurrencyDecision(holds, held.size(), limit.permits(), expired, 0),
					rate);
			return held.isEmpty() ? null : held;
		});
		return decided[0];
	}

	/**
	 * What a peek says a request that was allowed has left: allowed, with no delay.
	 */
	private static Decision allowedAsFar(Decision peek, List<LimitSpec> limits) {
		List<Decision> each = new ArrayList<>(limits.size());
		for (int i = 0; i < limits.size(); i++) {
			Decision limit = peek.limits().get(i);
			each.add(Decision.allowed(limits.get(i), limit.remaining(), limit.resetAfterMicros(), 0));
		}
		return Decision.combine(each);
	}

	@Override
	public boolean renew(String bucket, String key, ConcurrencyLimit limit, String holder) {
		long now = this.time.nowMicros();
		boolean[] renewed = new boolean[1];
		this.keys.computeIfPresent(Key.of(bucket, key), (k, held) -> {
			expire(held, now);
			renewed[0] = held.replace(holder, now + limit.leaseMicros()) != null;
			return held.isEmpty() ? null : held;
		});
		return renewed[0];
	}

	@Override
	public boolean release(String bucket, String key, String holder) {
		long now = this.time.nowMicros();
		boolean[] released = new boolean[1];
		this.keys.computeIfPresent(Key.of(bucket, key), (k, held) -> {
			expire(held, now);
			released[0] = held.remove(holder) != null;
			return held.isEmpty() ? null : held;
		});
		return released[0];
	}

	@Override
	public Holders holders(String bucket, String key) {
		long now = this.time.nowMicros();
		Holders[] holders = { Holders.NONE };
		this.keys.computeIfPresent(Key.of(bucket, key), (k, held) -> {
			expire(held, now);
			holders[0] = new Holders(held.size(), nextExpiry(held, now));
			return held.isEmpty() ? null : held;
		});
		return holders[0];
	}

	@Override
	public int releaseAll(String bucket, String key) {
		long now = this.time.nowMicros();
		Map<String, Long> held = this.keys.remove(Key.of(bucket, key));
		if (held == null) {
			return 0;
		}
		// Removed from the map: no compute changes it any more.
		expire(held, now);
		return held.size();
	}

	/** Takes back the leases that ended at or before {@code now}; returns how many. */
	private static int expire(Map<String, Long> held, long now) {
		int expired = 0;
		for (Iterator<Long> ends = held.values().iterator(); ends.hasNext();) {
			if (ends.next() <= now) {
				ends.remove();
				expired++;
			}
		}
		return expired;
	}

	private static long nextExpiry(Map<String, Long> held, long now) {
		long next = Long.MAX_VALUE;
		for (long end : held.values()) {
			next = Math.min(next, end);
		}
		return held.isEmpty() ? 0 : next - now;
	}

	private record Key(String bucket, String key) {

		static Key of(String bucket, String key) {
			StoreArguments.check(bucket, key);
			return new Key(bucket, key);
		}

	}

}
