package io.github.ratelimit.store;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * Remembers the rejections a shared store made, so that this instance can answer the same
 * request again without asking the store until the rejection's retry-after has passed.
 * <p>
 * Why the answer is the one the store would give: a request is answered from here only
 * when it is the same request (bucket, key, limits, cost and leaky-bucket delay bound) as
 * one the store rejected, and only when that rejection cannot change on its own before
 * its retry-after: every limit of it rejected with exactly {@code cost - 1} permits
 * remaining, so the next permit to come back is the one that admits the request, at the
 * retry-after (of the first limit to get there, for several). Leaky bucket limits are not
 * remembered: their queue drains while a rejected request waits for its delay bound. The
 * cache then reports the store's decision with its retry-after and reset-after shortened
 * by the time passed, counted from when the store's answer arrived, so the retry-after it
 * reports is never shorter than the store's. Anything this instance learns about the key
 * in the meantime (an allowing decision, a refund, a reset) forgets the rejection, and a
 * decision that raced with a refund or reset is not remembered.
 * <p>
 * It only ever answers "rejected", so it never admits more than the store would. Other
 * instances can only take more permits meanwhile, which makes the true wait longer than
 * the one reported (the store answers the retry). A refund or reset made on another
 * instance frees permits the store would now give: a rejection is answered from here for
 * at most {@code maxAge} after the store made it, so this instance asks the store again
 * within that time and honours what other instances gave back ({@link #clear()} forgets
 * everything at once, e.g. when another instance reset a key). A change of limits asks
 * with other limits, so it never meets a remembered rejection.
 * <p>
 * Bounded: at most one rejection per key and {@code maxEntries} in all; when full,
 * expired ones are dropped, and if it is still full new rejections are not remembered.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RejectionCache {

	/**
	 * The default longest time a rejection is answered from here: short enough that a
	 * refund or reset on another instance is honoured here within a second.
	 */
	public static final Duration DEFAULT_MAX_AGE = Duration.ofMillis(500);

	private final Map<Entry, Rejection> rejections = new ConcurrentHashMap<>();

	private final AtomicLong invalidations = new AtomicLong();

	private final LongAdder answered = new LongAdder();

	private final int maxEntries;

	private final long maxAgeNanos;

	private final LongSupplier nanoTime;

	/**
	 * Creates a cache on the system's monotonic clock.
	 * @param maxEntries the most rejections remembered at once, at least 1
	 * @param maxAge the longest a rejection is answered from here after the store made
	 * it, positive
	 */
	public RejectionCache(int maxEntries, Duration maxAge) {
		this(maxEntries, maxAge, System::nanoTime);
	}

	/**
	 * Creates a cache on the given monotonic clock (tests).
	 * @param maxEntries the most rejections remembered at once, at least 1
	 * @param maxAge the longest a rejection is answered from here after the store made
	 * it, positive
	 * @param nanoTime a monotonic clock in nanoseconds, like {@link System#nanoTime()}
	 */
	public RejectionCache(int maxEntries, Duration maxAge, LongSupplier nanoTime) {
		if (maxEntries < 1) {
			throw new IllegalArgumentException("maxEntries must be at least 1 but was " + maxEntries);
		}
		if (maxAge == null || maxAge.isNegative() || maxAge.isZero()) {
			throw new IllegalArgumentException("maxAge must be positive but was " + maxAge);
		}
		this.maxEntries = maxEntries;
		this.maxAgeNanos = maxAge.toNanos();
		this.nanoTime = Objects.requireNonNull(nanoTime, "'nanoTime' must not be null");
	}

	/**
	 * Answers a request from a remembered rejection, if one still applies.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits of the request
	 * @param cost the permits the request asks for
	 * @param maxDelayMicros the longest leaky bucket delay the caller accepts
	 * @return the rejection as it stands now (its waits shortened by the time passed), or
	 * {@code null} when the store must be asked
	 */
	public @Nullable Decision answer(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		if (this.rejections.isEmpty()) {
			return null;
		}
		Entry entry = new Entry(bucket, key);
		Rejection rejection = this.rejections.get(entry);
		if (rejection == null || !rejection.limits.equals(limits)) {
			return null;
		}
		long now = this.nanoTime.getAsLong();
		if (now - rejection.untilNanos >= 0) {
			this.rejections.remove(entry, rejection);
			return null;
		}
		if (cost != rejection.cost || maxDelayMicros != rejection.maxDelayMicros) {
			return null;
		}
		this.answered.increment();
		return rejection.decision.elapsed(TimeUnit.NANOSECONDS.toMicros(now - rejection.receivedNanos));
	}

	/**
	 * Returns a token to pass to {@link #remember}, taken before the store is asked, so
	 * that a decision that raced with an {@link #invalidate} is not remembered.
	 * @return the token
	 */
	public long token() {
		return this.invalidations.get();
	}

	/**
	 * Takes note of a decision the store just made: remembers a rejection that cannot
	 * change before its retry-after (see the class description), made by the store itself
	 * (not a fallback); forgets the key's rejection on any other decision.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits of the request
	 * @param cost the permits the request asked for
	 * @param maxDelayMicros the leaky bucket delay bound of the request
	 * @param decision the store's decision
	 * @param token {@link #token()} taken before the store was asked
	 */
	public void remember(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros,
			Decision decision, long token) {
		if (!isSteadyRejection(limits, decision, cost)) {
			if (!this.rejections.isEmpty()) {
				this.rejections.remove(new Entry(bucket, key));
			}
			return;
		}
		if (this.rejections.size() >= this.maxEntries && !dropExpired()) {
			return;
		}
		long received = this.nanoTime.getAsLong();
		long until = received + Math.min(this.maxAgeNanos, TimeUnit.MICROSECONDS.toNanos(firstChangeMicros(decision)));
		Entry entry = new Entry(bucket, key);
		Rejection rejection = new Rejection(List.copyOf(limits), decision, received, until, cost, maxDelayMicros);
		this.rejections.put(entry, rejection);
		if (this.invalidations.get() != token) {
			this.rejections.remove(entry, rejection);
		}
	}

	private static boolean isSteadyRejection(List<LimitSpec> limits, Decision decision, long cost) {
		if (decision.allowed() || decision.origin() != Decision.Origin.STORE
				|| decision.retryAfterMicros() == Decision.NEVER || decision.retryAfterMicros() <= 0) {
			return false;
		}
		for (LimitSpec limit : limits) {
			// A shaping queue drains while the request waits for its delay bound.
			if (limit.algorithm() == Algorithm.LEAKY_BUCKET) {
				return false;
			}
		}
		for (Decision limit : decision.limits()) {
			if (limit.allowed() || limit.remaining() != cost - 1) {
				return false;
			}
		}
		return decision.remaining() == cost - 1;
	}

	/**
	 * Forgets the rejections of one key (any limits), after a refund or reset of it.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 */
	public void invalidate(String bucket, String key) {
		this.invalidations.incrementAndGet();
		this.rejections.remove(new Entry(bucket, key));
	}

	/**
	 * Forgets every rejection, e.g. once another instance reset a key: what it freed is
	 * then asked of the store.
	 */
	public void clear() {
		this.invalidations.incrementAndGet();
		this.rejections.clear();
	}

	/**
	 * Returns how many requests this cache answered since it was created.
	 * @return the number of decisions made without asking the store
	 */
	public long answered() {
		return this.answered.sum();
	}

	/**
	 * Returns whether no rejection is remembered, the common case: callers can skip the
	 * rest of a lookup.
	 * @return {@code true} when empty
	 */
	public boolean isEmpty() {
		return this.rejections.isEmpty();
	}

	/**
	 * Returns how many rejections are remembered now.
	 * @return the number of entries
	 */
	public int size() {
		return this.rejections.size();
	}

	/**
	 * The first moment one of the limits gives a permit back, and so changes its part of
	 * the decision.
	 */
	private static long firstChangeMicros(Decision decision) {
		long first = decision.retryAfterMicros();
		for (Decision limit : decision.limits()) {
			first = Math.min(first, limit.retryAfterMicros());
		}
		return first;
	}

	private boolean dropExpired() {
		long now = this.nanoTime.getAsLong();
		this.rejections.values().removeIf((rejection) -> now - rejection.untilNanos >= 0);
		return this.rejections.size() < this.maxEntries;
	}

	/**
	 * One rejection per key: a key asked with other limits (a rolling change of limits)
	 * replaces it, which only costs a store call.
	 */
	private record Entry(String bucket, String key) {

	}

	private record Rejection(List<LimitSpec> limits, Decision decision, long receivedNanos, long untilNanos, long cost,
			long maxDelayMicros) {

	}

}
