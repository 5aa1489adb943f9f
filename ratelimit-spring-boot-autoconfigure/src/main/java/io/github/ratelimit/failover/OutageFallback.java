package io.github.ratelimit.failover;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.failover.LastHeard.Heard;
import io.github.ratelimit.failover.LastHeard.KeyRef;
import io.github.ratelimit.store.PartialStoreOutageException;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The per-instance side of {@link FailoverRateLimitStore}: decides on this instance's
 * share of each limit while the shared store cannot, and makes sure the fleet's window
 * still holds about one limit across the outage.
 * <ul>
 * <li>A key starts from what this instance last heard of it from the shared store
 * ({@link LastHeard}): what remained then, divided among the instances, rather than a
 * fresh share of a full limit. A key never heard of starts with a full share.</li>
 * <li>Every permit admitted here is counted, and written back to the shared store once it
 * answers again ({@link RateLimitStore#charge}), before the key is decided there again:
 * until its write-back is done, a key stays on this side.</li>
 * <li>When the shared store lost its data (restarted empty), the usage heard of each key
 * still in use is written back too, unless the key is already back in the store
 * ({@link RateLimitStore#restore}).</li>
 * </ul>
 * Decisions on one key here are made one at a time: an outage is the rare case, and the
 * count must not miss a permit that a write-back races with.
 */
final class OutageFallback {

	private static final Log logger = LogFactory.getLog(OutageFallback.class);

	/**
	 * How long after this instance wrote a key back the others' write-backs of the same
	 * outage may still be on their way: each writes back within a few heartbeats (500ms
	 * by default) of the shared store answering it again.
	 */
	private static final long SETTLED_NANOS = TimeUnit.SECONDS.toNanos(10);

	/** See {@link #lastFailurePartial()}. */
	private volatile boolean lastFailurePartial;

	private final RateLimitStore fallback;

	private final FallbackLimits shares;

	private final LastHeard heard;

	private final Map<KeyRef, Entry> entries = new ConcurrentHashMap<>();

	/**
	 * What this instance admitted here for each key it wrote back lately, and when: see
	 * {@link #seed}.
	 */
	private final Map<KeyRef, WrittenBack> writtenBack = new ConcurrentHashMap<>();

	OutageFallback(RateLimitStore fallback, FallbackLimits shares, LastHeard heard) {
		this.fallback = fallback;
		this.shares = shares;
		this.heard = heard;
	}

	/**
	 * Returns whether a key has permits (or heard usage) to write back, and so must stay
	 * on this side until they are.
	 */
	boolean pending(String bucket, String key) {
		return !this.entries.isEmpty() && this.entries.containsKey(new KeyRef(bucket, key));
	}

	/**
	 * Returns how many keys have something to write back.
	 */
	int pendingKeys() {
		return this.entries.size();
	}

	/**
	 * Decides on this instance's share of the limits, and counts what it admits. With
	 * {@code countOnly} ({@code open} mode) every request is admitted, and counted. A
	 * request that {@code mayHaveRun} in the shared store (sent, then its connection was
	 * lost) is taken as having taken its permits there too: its cost comes off this share
	 * before it is decided here, since the others may not know of it.
	 */
	Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros,
			boolean countOnly, boolean mayHaveRun) {
		while (true) {
			Entry entry = this.entries.computeIfAbsent(new KeyRef(bucket, key), (ref) -> new Entry(ref, limits));
			synchronized (entry) {
				if (entry.closed) {
					// Written back meanwhile: this key starts a new entry.
					continue;
				}
				List<LimitSpec> shares = this.shares.of(limits);
				Heard heard = this.heard.get(bucket, key, limits);
				if (logger.isDebugEnabled() && entry.decisions++ == 0) {
					logger.debug("Key '" + key + "' in bucket '" + bucket + "' decided by this instance: share "
							+ shares.get(0).capacity() + " of " + limits.get(0).capacity() + ", last heard "
							+ ((heard != null) ? Arrays.toString(heard.usedAt(this.heard.nanoTime())) + " used"
									: "nothing")
							+ (mayHaveRun ? ", " + cost + " that may have run" : ""));
				}
				seed(entry, shares, heard);
				if (mayHaveRun) {
					entry.mayHaveRun += cost;
					long[] costs = new long[shares.size()];
					Arrays.fill(costs, cost);
					this.fallback.charge(bucket, key, shares, costs);
				}
				Decision decision = this.fallback.decide(bucket, key, shares, cost, maxDelayMicros);
				if (countOnly) {
					decision = allowedAnyway(decision);
				}
				if (decision.allowed()) {
					entry.admit(limits, cost);
				}
				return decision.withOrigin(Decision.Origin.FALLBACK);
			}
		}
	}

	/**
	 * Takes permits from this instance's share, and counts them to be written back.
	 */
	void charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		while (true) {
			Entry entry = this.entries.computeIfAbsent(new KeyRef(bucket, key), (ref) -> new Entry(ref, limits));
			synchronized (entry) {
				if (entry.closed) {
					continue;
				}
				this.fallback.charge(bucket, key, this.shares.of(limits), costs);
				entry.charge(limits, costs);
				return;
			}
		}
	}

	/**
	 * Gives back permits this side admitted.
	 * @return {@code false} when they were written back to the shared store already,
	 * where they must be given back instead
	 */
	boolean refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		Entry entry = this.entries.isEmpty() ? null : this.entries.get(new KeyRef(bucket, key));
		if (entry != null) {
			synchronized (entry) {
				if (!entry.closed) {
					this.fallback.refund(bucket, key, this.shares.of(limits), cost);
					entry.giveBack(cost);
					return true;
				}
			}
		}
		return false;
	}

	Decision peek(String bucket, String key, List<LimitSpec> limits) {
		return this.fallback.peek(bucket, key, this.shares.of(limits)).withOrigin(Decision.Origin.FALLBACK);
	}

	/**
	 * Forgets a key here: its share, what it admitted and what was heard of it. A key
	 * reset by an operator starts afresh everywhere.
	 */
	void reset(String bucket, String key, List<LimitSpec> limits) {
		Entry entry = this.entries.isEmpty() ? null : this.entries.get(new KeyRef(bucket, key));
		if (entry != null) {
			synchronized (entry) {
				close(entry);
			}
		}
		this.fallback.reset(bucket, key, this.shares.of(limits));
		this.heard.forget(bucket, key);
		this.writtenBack.remove(new KeyRef(bucket, key));
	}

	/**
	 * The shared store lost its data: the usage heard of each key still in use is to be
	 * written back, and until it is, the key is decided here.
	 */
	void storeLostItsData() {
		long now = this.heard.nanoTime();
		int[] keys = new int[1];
		this.heard.forEachInUse((ref, heard) -> {
			while (true) {
				Entry entry = this.entries.computeIfAbsent(ref, (r) -> new Entry(r, heard.limits()));
				synchronized (entry) {
					if (entry.closed) {
						// Written back meanwhile, maybe to the store that lost it: again.
						continue;
					}
					if (entry.limits.equals(heard.limits())) {
						entry.restore = heard.usedAt(now);
						seed(entry, this.shares.of(entry.limits), heard);
						keys[0]++;
					}
					return;
				}
			}
		});
		// What was heard is kept: it is still this instance's knowledge of each key,
		// should Redis lose its data again before every key is written back.
		logger.warn("Rate limit store: Redis lost its data (restarted empty or flushed); writing back the rate limit "
				+ "usage this instance last heard of, " + keys[0] + " key(s), each decided by this instance until "
				+ "its usage is back in Redis");
	}

	/**
	 * Whether the last write-back that failed failed for its key alone
	 * ({@link PartialStoreOutageException}: the part of the store holding it is down).
	 * @return {@code true} for a partial outage
	 */
	boolean lastFailurePartial() {
		return this.lastFailurePartial;
	}

	/**
	 * Writes back what each key admitted here, and the usage to restore, to the shared
	 * store; a key whose write-back is done leaves this side.
	 * @param store the shared store
	 * @return {@code false} when the store failed (the rest is tried again later),
	 * {@code true} when every key was written back or decided here again meanwhile
	 */
	boolean writeBack(RateLimitStore store) {
		for (Entry entry : this.entries.values()) {
			if (!writeBack(store, entry, false)) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Returns whether some key has permits (or usage) to write back, as opposed to keys
	 * that only wait for the other instances' write-backs (see {@link #settled}).
	 */
	boolean writable() {
		for (Entry entry : this.entries.values()) {
			synchronized (entry) {
				if (!entry.closed && !(entry.settling() && entry.isEmpty())) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * Writes back what one key admitted here (and its usage to restore), so that it can
	 * be decided by the shared store again.
	 * @param store the shared store
	 * @return {@code true} when the key has nothing left to write back, {@code false}
	 * when the store failed
	 */
	boolean writeBack(RateLimitStore store, String bucket, String key) {
		Entry entry = this.entries.isEmpty() ? null : this.entries.get(new KeyRef(bucket, key));
		return entry == null || writeBack(store, entry, true);
	}

	/**
	 * Writes one key back, holding it the while: decisions on it here wait (at most the
	 * store's timeout), so that none is counted between the write and the key's leaving
	 * this side. A key whose admissions here are written back stays on this side until
	 * the shared store shows the other instances' write-backs too (see {@link #settled});
	 * {@code onDemand} (a request for the key) reads the store again to see whether they
	 * came, the background rounds do not.
	 */
	private boolean writeBack(RateLimitStore store, Entry entry, boolean onDemand) {
		synchronized (entry) {
			if (entry.closed) {
				return true;
			}
			if (entry.settling() && entry.isEmpty()) {
				if (this.heard.nanoTime() - entry.settleSince < SETTLED_NANOS) {
					if (!onDemand) {
						return true;
					}
					if (!heardAfterWriting(store, entry)) {
						return false;
					}
					if (!settled(entry)) {
						return true;
					}
				}
				leave(entry);
				return true;
			}
			Pending pending = entry.take();
			try {
				write(store, entry, pending);
			}
			catch (UnsupportedOperationException ex) {
				logger.debug("Rate limit store '" + store.name() + "' cannot take permits written back; dropped", ex);
			}
			catch (RuntimeException ex) {
				this.lastFailurePartial = ex instanceof PartialStoreOutageException;
				entry.putBack(pending);
				logger.debug("Could not write back to rate limit store '" + store.name() + "'; trying again later", ex);
				return false;
			}
			if (!heardAfterWriting(store, entry)) {
				return false;
			}
			long now = this.heard.nanoTime();
			if (Arrays.stream(pending.admitted).anyMatch((cost) -> cost > 0)) {
				this.writtenBack.merge(entry.ref, new WrittenBack(pending.limits, pending.admitted, now),
						WrittenBack::plus);
				if (!entry.settling() && this.shares.instances() > 1) {
					entry.settle(pending, this.shares.instances(), now);
				}
			}
			if (!entry.settling() || settled(entry) || now - entry.settleSince >= SETTLED_NANOS) {
				leave(entry);
			}
			return true;
		}
	}

	/**
	 * Whether the shared store shows about as much used as the instances admitted in the
	 * outage, taking each other instance to have admitted as much as this one (the
	 * fallback gives each the same share): then their write-backs have come too, and the
	 * key can be decided there again. Until then (at most {@code SETTLED_NANOS}), a key
	 * decided there would be decided without what the others admitted, which they have
	 * not written yet: after a full outage, up to a limit more (measured: 3 more of 20).
	 */
	private boolean settled(Entry entry) {
		Heard heard = this.heard.get(entry.ref.bucket(), entry.ref.key(), entry.limits);
		long[] expected = entry.settleTo;
		if (heard == null || expected == null) {
			return true;
		}
		long[] used = heard.usedAt(this.heard.nanoTime());
		if (used.length != expected.length) {
			return true;
		}
		for (int i = 0; i < used.length; i++) {
			if (used[i] < expected[i]) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The key is decided by the shared store again.
	 */
	private void leave(Entry entry) {
		close(entry);
		this.fallback.reset(entry.ref.bucket(), entry.ref.key(), this.shares.of(entry.limits));
	}

	/**
	 * Hears what the shared store holds for a key once its permits are written back: if
	 * the store fails again before it decides the key, the next outage must start the key
	 * from what was admitted here too, not from what was heard before this one. Until
	 * this is heard, the key stays here (with nothing left to write).
	 */
	private boolean heardAfterWriting(RateLimitStore store, Entry entry) {
		String bucket = entry.ref.bucket();
		String key = entry.ref.key();
		Decision now;
		try {
			now = store.peek(bucket, key, entry.limits);
		}
		catch (RuntimeException ex) {
			this.lastFailurePartial = ex instanceof PartialStoreOutageException;
			logger.debug("Could not read back from rate limit store '" + store.name() + "'; trying again later", ex);
			return false;
		}
		this.heard.record(bucket, key, entry.limits, now);
		return true;
	}

	private static void write(RateLimitStore store, Entry entry, Pending pending) {
		String bucket = entry.ref.bucket();
		String key = entry.ref.key();
		long[] admitted = pending.admitted;
		if (pending.restore != null) {
			long[] usage = new long[admitted.length];
			for (int i = 0; i < usage.length; i++) {
				usage[i] = saturatedAdd(pending.restore[i], admitted[i]);
			}
			boolean restored = store.restore(bucket, key, pending.limits, usage);
			if (logger.isDebugEnabled()) {
				logger.debug("Usage of key '" + key + "' in bucket '" + bucket + "' " + Arrays.toString(usage)
						+ (restored ? " restored" : " not restored: the store has the key again"));
			}
			if (restored) {
				return;
			}
		}
		long[] charged = new long[admitted.length];
		long refunded = Long.MAX_VALUE;
		for (int i = 0; i < admitted.length; i++) {
			charged[i] = Math.max(0, admitted[i]);
			refunded = Math.min(refunded, Math.max(0, -admitted[i]));
		}
		if (Arrays.stream(charged).anyMatch((cost) -> cost > 0)) {
			store.charge(bucket, key, pending.limits, charged);
			if (logger.isDebugEnabled()) {
				logger.debug("Key '" + key + "' in bucket '" + bucket + "': " + Arrays.toString(charged)
						+ " admitted by this instance written back (" + entry.decisions + " decisions here, "
						+ entry.mayHaveRun + " that may have run)");
			}
		}
		if (refunded > 0 && refunded != Long.MAX_VALUE) {
			// Given back while an earlier write-back of them was on its way.
			store.refund(bucket, key, pending.limits, refunded);
		}
	}

	private void close(Entry entry) {
		entry.closed = true;
		this.entries.remove(entry.ref, entry);
	}

	/**
	 * Starts a key from what this instance last heard of it: its share of what remained,
	 * so that the instances together admit about what remained, not a full limit more.
	 * Called for each decision here: a decision of the shared store may be heard after
	 * the key came here (its caller's thread ran late), and what it tells is taken too.
	 */
	private void seed(Entry entry, List<LimitSpec> shares, @Nullable Heard heard) {
		if (heard == null) {
			return;
		}
		List<LimitSpec> limits = heard.limits();
		long now = this.heard.nanoTime();
		long[] used = heard.usedAt(now);
		WrittenBack lately = this.writtenBack.isEmpty() ? null : this.writtenBack.get(entry.ref);
		if (lately != null && now - lately.atNanos() >= SETTLED_NANOS) {
			this.writtenBack.remove(entry.ref, lately);
		}
		else if (lately != null && lately.limits().equals(limits)) {
			// Written back lately: what was heard then held this instance's admissions
			// from the outage, maybe not yet the others', each up to a share like this
			// one's. Taken as that much more used (the strict side) until theirs have
			// surely been written back too.
			int others = this.shares.instances() - 1;
			for (int i = 0; i < used.length; i++) {
				used[i] = saturatedAdd(used[i], saturatedMultiply(lately.admitted()[i], others));
			}
		}
		if (entry.seeded.length != used.length) {
			entry.seeded = new long[used.length];
		}
		long[] more = new long[used.length];
		boolean any = false;
		for (int i = 0; i < used.length; i++) {
			long remaining = Math.max(0, limits.get(i).capacity() - used[i]);
			long seed = Math.max(0, shares.get(i).capacity() - this.shares.shareOfRemaining(remaining));
			more[i] = Math.max(0, seed - entry.seeded[i]);
			entry.seeded[i] += more[i];
			any |= more[i] > 0;
		}
		if (any) {
			this.fallback.charge(entry.ref.bucket(), entry.ref.key(), shares, more);
		}
	}

	/**
	 * {@code open} mode: the request goes ahead, with what this instance counted (no
	 * delay, remaining zero when the count is over the share).
	 */
	private static Decision allowedAnyway(Decision counted) {
		if (counted.allowed() && counted.delayMicros() == 0) {
			return counted;
		}
		List<Decision> perLimit = counted.limits();
		List<Decision> allowed = new ArrayList<>(perLimit.size());
		for (Decision limit : perLimit) {
			LimitSpec spec = Objects.requireNonNull(limit.spec(), "a store decision has a spec");
			allowed.add(Decision.allowed(spec, limit.allowed() ? limit.remaining() : 0, limit.resetAfterMicros(), 0));
		}
		return Decision.combine(allowed);
	}

	private static long saturatedMultiply(long a, int b) {
		try {
			return Math.multiplyExact(Math.max(0, a), b);
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

	private static long saturatedAdd(long a, long b) {
		long sum = a + b;
		// Overflow only when both have the sign the sum lacks.
		if (((a ^ sum) & (b ^ sum)) < 0) {
			return (a < 0) ? Long.MIN_VALUE : Long.MAX_VALUE;
		}
		return sum;
	}

	/**
	 * One key decided here: what it admitted and what it has to restore, not yet written
	 * back. Guarded by its own monitor.
	 */
	private static final class Entry {

		final KeyRef ref;

		List<LimitSpec> limits;

		/** Permits of each share taken for what was heard of the key. */
		long[] seeded = new long[0];

		/**
		 * Permits admitted (or charged) here and not yet written back, per limit; below
		 * zero when more was given back than is left to write (the rest was on its way to
		 * the shared store as it was given back).
		 */
		long[] admitted;

		long @Nullable [] restore;

		boolean closed;

		/**
		 * What the shared store must show used before the key leaves this side once its
		 * admissions are written back (see {@link OutageFallback#settled}), per limit;
		 * {@code null} when it does not wait for that.
		 */
		long @Nullable [] settleTo;

		/** When the key began to wait for the other instances' write-backs. */
		long settleSince;

		/**
		 * Decisions made here, and the cost of those that may have run, for the debug
		 * log.
		 */
		int decisions;

		long mayHaveRun;

		Entry(KeyRef ref, List<LimitSpec> limits) {
			this.ref = ref;
			this.limits = limits;
			this.admitted = new long[limits.size()];
		}

		void admit(List<LimitSpec> limits, long cost) {
			fit(limits);
			for (int i = 0; i < this.admitted.length; i++) {
				this.admitted[i] = saturatedAdd(this.admitted[i], cost);
			}
		}

		void charge(List<LimitSpec> limits, long[] costs) {
			fit(limits);
			for (int i = 0; i < this.admitted.length; i++) {
				this.admitted[i] = saturatedAdd(this.admitted[i], costs[i]);
			}
		}

		void giveBack(long cost) {
			for (int i = 0; i < this.admitted.length; i++) {
				this.admitted[i] = saturatedAdd(this.admitted[i], -cost);
			}
		}

		/**
		 * Counts under the limits of the latest decision (a live change of limits during
		 * an outage): what was admitted carries over by position.
		 */
		private void fit(List<LimitSpec> limits) {
			if (limits.size() != this.admitted.length) {
				this.admitted = Arrays.copyOf(this.admitted, limits.size());
				this.restore = null;
			}
			this.limits = limits;
		}

		boolean settling() {
			return this.settleTo != null;
		}

		/**
		 * Waits for the others' write-backs: as much again as this instance admitted, for
		 * each other instance, at most a limit in all.
		 */
		void settle(Pending written, int instances, long nowNanos) {
			long[] expected = new long[written.admitted.length];
			for (int i = 0; i < expected.length; i++) {
				expected[i] = Math.min(written.limits.get(i).capacity(),
						saturatedMultiply(written.admitted[i], instances));
			}
			this.settleTo = expected;
			this.settleSince = nowNanos;
		}

		boolean isEmpty() {
			return this.restore == null && Arrays.stream(this.admitted).allMatch((cost) -> cost == 0);
		}

		Pending take() {
			Pending pending = new Pending(this.limits, this.admitted, this.restore);
			this.admitted = new long[this.limits.size()];
			this.restore = null;
			return pending;
		}

		void putBack(Pending pending) {
			if (pending.limits.size() == this.admitted.length) {
				for (int i = 0; i < this.admitted.length; i++) {
					this.admitted[i] = saturatedAdd(this.admitted[i], pending.admitted[i]);
				}
			}
			if (pending.restore != null && this.restore == null) {
				this.restore = pending.restore;
			}
		}

	}

	/**
	 * What one key admitted here was written back, and when.
	 *
	 * @param limits the limits it was admitted under
	 * @param admitted the permits of each limit
	 * @param atNanos when, on {@link System#nanoTime()}'s scale
	 */
	private record WrittenBack(List<LimitSpec> limits, long[] admitted, long atNanos) {

		/**
		 * This one and a later write-back of the same key: what was admitted adds up,
		 * from the first one's time.
		 */
		WrittenBack plus(WrittenBack later) {
			if (!this.limits.equals(later.limits) || this.admitted.length != later.admitted.length) {
				return later;
			}
			long[] sum = new long[this.admitted.length];
			for (int i = 0; i < sum.length; i++) {
				sum[i] = saturatedAdd(this.admitted[i], later.admitted[i]);
			}
			return new WrittenBack(this.limits, sum, this.atNanos);
		}

	}

	/**
	 * What a write-back takes of an entry.
	 */
	private record Pending(List<LimitSpec> limits, long[] admitted, long @Nullable [] restore) {
	}

}
