package io.github.ratelimit.concurrency;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.TimeSource;
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
