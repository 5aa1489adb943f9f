package io.github.ratelimit.failover;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * What this instance last heard from the shared store about each key: the store's latest
 * decision on it, and when. It is what this instance knows of a key's usage when the
 * store cannot tell: the fallback starts a key from it instead of from a full limit, and
 * it is written back to a store that lost its data.
 * <p>
 * Read as usage that still matters at a later time, a decision is taken on the strict
 * side: for the bucket algorithms, the permits that came back since at the limit's rate;
 * for the window algorithms, all the permits used until the decision's reset-after has
 * passed (the oldest of them may leave the window sooner).
 * <p>
 * Bounded: at most {@code maxKeys} keys; when full, keys not yet heard of are not
 * recorded until {@link #dropExpired()} has made room.
 */
final class LastHeard {

	private final Map<KeyRef, Heard> heard = new ConcurrentHashMap<>();

	private final int maxKeys;

	private final LongSupplier nanoTime;

	LastHeard(int maxKeys, LongSupplier nanoTime) {
		this.maxKeys = maxKeys;
		this.nanoTime = nanoTime;
	}

	/**
	 * Takes note of a decision of the shared store, unless one heard before tells of more
	 * usage still: concurrent callers note their decisions in any order, and the decision
	 * the store made last is the one that counted the most.
	 */
	void record(String bucket, String key, List<LimitSpec> limits, Decision decision) {
		KeyRef ref = new KeyRef(bucket, key);
		Heard heard = new Heard(limits, decision, this.nanoTime.getAsLong());
		if (this.heard.size() < this.maxKeys) {
			this.heard.merge(ref, heard, LastHeard::latestThatCountsMost);
		}
		else {
			this.heard.computeIfPresent(ref, (r, before) -> latestThatCountsMost(before, heard));
		}
	}

	/** Of its arguments only, so that nothing is allocated for it per decision. */
	private static Heard latestThatCountsMost(Heard before, Heard latest) {
		return latest.supersedes(before, latest.heardAtNanos()) ? latest : before;
	}

	/**
	 * Returns what was last heard of a key under these limits.
	 * @return the decision heard, or {@code null} when none was, or under other limits
	 */
	@Nullable Heard get(String bucket, String key, List<LimitSpec> limits) {
		if (this.heard.isEmpty()) {
			return null;
		}
		Heard heard = this.heard.get(new KeyRef(bucket, key));
		return (heard != null && heard.limits().equals(limits)) ? heard : null;
	}

	void forget(String bucket, String key) {
		if (!this.heard.isEmpty()) {
			this.heard.remove(new KeyRef(bucket, key));
		}
	}

	void clear() {
		this.heard.clear();
	}

	int size() {
		return this.heard.size();
	}

	long nanoTime() {
		return this.nanoTime.getAsLong();
	}

	/**
	 * Forgets the keys whose every limit is full again by now.
	 */
	void dropExpired() {
		long now = this.nanoTime.getAsLong();
		this.heard.values().removeIf((heard) -> heard.fullAgainAt(now));
	}

	/**
	 * Hands every key still in use to {@code action}, with its usage now.
	 */
	void forEachInUse(BiConsumer<KeyRef, Heard> action) {
		long now = this.nanoTime.getAsLong();
		this.heard.forEach((ref, heard) -> {
			if (!heard.fullAgainAt(now)) {
				action.accept(ref, heard);
			}
		});
	}

	/**
	 * A bucket and key.
	 *
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 */
	record KeyRef(String bucket, String key) {
	}

	/**
	 * One decision heard from the shared store.
	 *
	 * @param limits the limits it was made under
	 * @param decision the decision
	 * @param heardAtNanos when it arrived, on {@link System#nanoTime()}'s scale
	 */
	record Heard(List<LimitSpec> limits, Decision decision, long heardAtNanos) {

		/**
		 * Returns the permits of each limit still in use at {@code nowNanos}, as far as
		 * this decision tells (see {@link LastHeard}).
		 * @param nowNanos the time, on {@link System#nanoTime()}'s scale
		 * @return the usage of each limit, in the order of the limits
		 */
		long[] usedAt(long nowNanos) {
			long elapsed = TimeUnit.NANOSECONDS.toMicros(Math.max(0, nowNanos - this.heardAtNanos));
			List<Decision> perLimit = this.decision.limits();
			long[] used = new long[this.limits.size()];
			for (int i = 0; i < used.length; i++) {
				used[i] = usedAt(this.limits.get(i), perLimit.get(i), elapsed);
			}
			return used;
		}

		private static long usedAt(LimitSpec spec, Decision heard, long elapsedMicros) {
			if (elapsedMicros >= heard.resetAfterMicros()) {
				return 0;
			}
			long used = Math.max(0, spec.capacity() - heard.remaining());
			if (!spec.algorithm().usesBurst()) {
				return used;
			}
			// Permits come back at limit / window: floor(elapsed * limit / window).
			long back = BigInteger.valueOf(elapsedMicros)
				.multiply(BigInteger.valueOf(spec.limit()))
				.divide(BigInteger.valueOf(spec.windowMicros()))
				.min(BigInteger.valueOf(used))
				.longValue();
			return used - back;
		}

		/**
		 * Returns whether this decision, heard at {@code nowNanos}, tells at least as
		 * much usage of every limit as {@code before} does by now, or is under other
		 * limits. Usually it does: it is the store's later decision.
		 */
		boolean supersedes(Heard before, long nowNanos) {
			if (!before.limits.equals(this.limits)) {
				return true;
			}
			List<Decision> latest = this.decision.limits();
			List<Decision> earlier = before.decision.limits();
			boolean noneLeftMore = true;
			for (int i = 0; i < latest.size(); i++) {
				noneLeftMore &= latest.get(i).remaining() <= earlier.get(i).remaining();
			}
			if (noneLeftMore) {
				return true;
			}
			long[] usedBefore = before.usedAt(nowNanos);
			long[] usedNow = usedAt(nowNanos);
			for (int i = 0; i < usedNow.length; i++) {
				if (usedBefore[i] > usedNow[i]) {
					return false;
				}
			}
			return true;
		}

		boolean fullAgainAt(long nowNanos) {
			long elapsed = TimeUnit.NANOSECONDS.toMicros(Math.max(0, nowNanos - this.heardAtNanos));
			for (Decision limit : this.decision.limits()) {
				if (elapsed < limit.resetAfterMicros()) {
					return false;
				}
			}
			return true;
		}

	}

}
