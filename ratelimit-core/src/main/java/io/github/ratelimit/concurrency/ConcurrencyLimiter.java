package io.github.ratelimit.concurrency;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreUnavailableException;

/**
 * At most N calls in flight per key of one bucket, across every instance that shares the
 * store: {@link #tryAcquire} takes a permit or says no at once, {@link #acquire} waits
 * for one up to a bound. A permit is renewed while held and released once
 * ({@link ConcurrencyPermit}). The annotation, the web filter and the direct API all take
 * permits here.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ConcurrencyLimiter {

	private static final Logger logger = Logger.getLogger(ConcurrencyLimiter.class.getName());

	/** The longest pause between two tries of a waiting request. */
	private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private static final AtomicLong sequence = new AtomicLong();

	/**
	 * Ids of this JVM's holders: random per JVM, from a strong source, so that instances
	 * started at the same instant never share one.
	 */
	private static final String INSTANCE = Long.toString(new SecureRandom().nextLong() >>> 1, 36);

	/**
	 * How often a request is asked of the store when an ask fails after it was sent: the
	 * store may have run it, and asking again for the same holder takes the same permit,
	 * not a second one.
	 */
	private static final int ASKS = 2;

	/**
	 * The retry estimate of a request refused in this JVM because the permits this
	 * instance holds in the store use its share: when those calls end is unknown here.
	 */
	private static final long LOCAL_RETRY_MICROS = TimeUnit.SECONDS.toMicros(1);

	/**
	 * How long a waiting request asks again a store it cannot reach before the failure
	 * mode decides: a dropped connection is made again within it.
	 */
	private static final long UNREACHABLE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final ConcurrencyStore store;

	private final String bucket;

	private final ConcurrencyLimit limit;

	private final LeaseRenewer renewer;

	private final ConcurrencyObserver observer;

	private final OnStoreFailure onStoreFailure;

	private final ConcurrencyStore local;

	private final IntSupplier instances;

	/**
	 * The permits this instance holds in the shared store, by key: counted against its
	 * share while the store fails, since their calls still run.
	 */
	private final Map<String, Integer> heldInStore = new ConcurrentHashMap<>();

	/**
	 * The permits this instance counted locally while the store failed and has not moved
	 * to it yet, by key.
	 */
	private final Map<String, Set<HeldLocally>> heldLocally = new ConcurrentHashMap<>();

	/** Whether a move of every permit counted locally is on its way. */
	private final AtomicBoolean movingAll = new AtomicBoolean();

	/**
	 * How long this instance's calls of the bucket lately held their permits, a moving
	 * average in nanoseconds; 0 before the first release.
	 */
	private final AtomicLong averageHoldNanos = new AtomicLong();

	/**
	 * Creates a limiter that counts in this JVM while its store fails.
	 * @param store where the permits are kept
	 * @param bucket the bucket name
	 * @param limit the limit
	 * @param renewer renews the leases of held permits
	 * @param observers told of every acquire, release and lost lease
	 */
	public ConcurrencyLimiter(ConcurrencyStore store, String bucket, ConcurrencyLimit limit, LeaseRenewer renewer,
			List<ConcurrencyObserver> observers) {
		this(store, bucket, limit, renewer, observers, OnStoreFailure.LOCAL);
	}

	/**
	 * Creates a limiter.
	 * @param store where the permits are kept
	 * @param bucket the bucket name
	 * @param limit the limit
	 * @param renewer renews the leases of held permits
	 * @param observers told of every acquire, release and lost lease
	 * @param onStoreFailure what a request does while the store cannot answer
	 */
	public ConcurrencyLimiter(ConcurrencyStore store, String bucket, ConcurrencyLimit limit, LeaseRenewer renewer,
			List<ConcurrencyObserver> observers, OnStoreFailure onStoreFailure) {
		this(store, bucket, limit, renewer, observers, onStoreFailure, () -> 1);
	}

	/**
	 * Creates a limiter that shares its limit with other instances while its store fails.
	 * @param store where the permits are kept
	 * @param bucket the bucket name
	 * @param limit the limit
	 * @param renewer renews the leases of held permits
	 * @param observers told of every acquire, release and lost lease
	 * @param onStoreFailure what a request does while the store cannot answer
	 * @param instances how many instances share the store now: with
	 * {@link OnStoreFailure#LOCAL}, each counts its share of the permits (rounded up)
	 * while the store cannot answer, so that the fleet holds about the limit, not
	 * {@code instances} times it
	 */
	public ConcurrencyLimiter(ConcurrencyStore store, String bucket, ConcurrencyLimit limit, LeaseRenewer renewer,
			List<ConcurrencyObserver> observers, OnStoreFailure onStoreFailure, IntSupplier instances) {
		this.instances = Objects.requireNonNull(instances, "'instances' must not be null");
		this.onStoreFailure = Objects.requireNonNull(onStoreFailure, "'onStoreFailure' must not be null");
		this.local = (store instanceof InMemoryConcurrencyStore) ? store : new InMemoryConcurrencyStore();
		this.store = Objects.requireNonNull(store, "'store' must not be null");
		this.bucket = Objects.requireNonNull(bucket, "'bucket' must not be null");
		this.limit = Objects.requireNonNull(limit, "'limit' must not be null");
		this.renewer = Objects.requireNonNull(renewer, "'renewer' must not be null");
		this.observer = new Observers(List.copyOf(observers));
	}

	/**
	 * Returns the bucket name.
	 * @return the bucket
	 */
	public String bucket() {
		return this.bucket;
	}

	/**
	 * Returns the limit.
	 * @return the limit
	 */
	public ConcurrencyLimit limit() {
		return this.limit;
	}

	/**
	 * Takes a permit of {@code key} if one is free, without waiting.
	 * @param key the key
	 * @return the permit, or a rejection ({@link ConcurrencyPermit#acquired()} false)
	 * @throws StoreUnavailableException when the store cannot answer and the limiter
	 * {@link OnStoreFailure#REJECT rejects} then
	 */
	public ConcurrencyPermit tryAcquire(String key) {
		ConcurrencyPermit permit = Objects.requireNonNull(ask(key, nextHolder(), null, null, null));
		this.observer.onAcquire(this.bucket, permit.decision(), false);
		return permit;
	}

	/**
	 * Takes a permit of {@code key} if one is free, without waiting, with the decision of
	 * the bucket's rate limits made in the same store call when the store can
	 * ({@link RateAndConcurrencyStore}). A call that fails after it was sent is made
	 * again for the same holder, which decides nothing twice. While the store fails, or
	 * while permits this instance counted during an outage wait to move to the store, the
	 * permit is taken alone, as {@link #tryAcquire(String)} does, and the caller decides
	 * the rate limits.
	 * @param key the key, of both limits
	 * @param call the store call that decides the rate limits and takes the permit
	 * @return the permit and, when that call decided them, the rate limits' decision
	 * @throws StoreUnavailableException when the store cannot answer and the limiter
	 * {@link OnStoreFailure#REJECT rejects} then
	 */
	public WithDecision tryAcquire(String key, OneCall call) {
		Objects.requireNonNull(call, "'call' must not be null");
		@Nullable Decision[] rate = new Decision[1];
		ConcurrencyPermit permit = Objects.requireNonNull(ask(key, nextHolder(), null, call, rate));
		if (permit.acquired() || rate[0] == null) {
			// A permit left free because the rate limits refused was not refused here.
			this.observer.onAcquire(this.bucket, permit.decision(), false);
		}
		return new WithDecision(permit, rate[0]);
	}

	/**
	 * Takes a permit of {@code key}, waiting up to {@code maxWait} for one to be
	 * released. A waiting request asks again every few milliseconds (up to 50, with
	 * jitter): permits go to whoever asks first once free, not in the order the requests
	 * came. A store that fails is asked again within the wait, for the same holder (which
	 * takes the same permit, not a second one): one that answers too late (the ask was
	 * sent, and may have run) until the wait runs out, one that cannot be reached (a
	 * dropped connection being made again) for up to a second. Only then does the failure
	 * mode decide.
	 * @param key the key
	 * @param maxWait the longest wait
	 * @return the permit, or a rejection once the wait ran out
	 * @throws InterruptedException when interrupted while waiting
	 * @throws StoreUnavailableException when the store cannot answer and the limiter
	 * {@link OnStoreFailure#REJECT rejects} then
	 */
	public ConcurrencyPermit acquire(String key, Duration maxWait) throws InterruptedException {
		long deadline = System.nanoTime() + maxWait.toNanos();
		String holder = nextHolder();
		long pause = TimeUnit.MILLISECONDS.toNanos(1);
		boolean waited = false;
		long[] failingSince = new long[1];
		Predicate<RateLimitStoreException> askAgain = (failure) -> {
			long now = System.nanoTime();
			if (deadline - now <= 0) {
				return false;
			}
			if (failure.mayHaveRun()) {
				return true;
			}
			if (failingSince[0] == 0) {
				failingSince[0] = now;
			}
			return now - failingSince[0] < UNREACHABLE_GRACE_NANOS;
		};
		while (true) {
			ConcurrencyPermit permit = ask(key, holder, askAgain, null, null);
			long left = deadline - System.nanoTime();
			if (permit != null) {
				failingSince[0] = 0;
			}
			// No permit (null: no answer yet) and time left: asked again after a pause.
			if (permit != null && (permit.acquired() || left <= 0)) {
				this.observer.onAcquire(this.bucket, permit.decision(), waited);
				return permit;
			}
			waited = true;
			long sleep = Math.min(left, ThreadLocalRandom.current().nextLong(pause / 2, pause + 1));
			TimeUnit.NANOSECONDS.sleep(sleep);
			pause = Math.min(MAX_POLL_NANOS, pause * 2);
		}
	}

	/**
	 * Moves the permits this instance counted in itself while the store failed to the
	 * store, off the calling thread, rather than each at its next renewal: until then the
	 * other instances do not count them. Called when the store is known to answer again
	 * (the Redis heartbeat's first answer after a failure, or a request's); does nothing
	 * when there are none.
	 */
	public void storeAnswersAgain() {
		if (!this.heldLocally.isEmpty() && this.movingAll.compareAndSet(false, true)) {
			this.renewer.runSoon(() -> {
				this.movingAll.set(false);
				this.heldLocally.values().forEach((permits) -> permits.forEach(HeldLocally::move));
			});
		}
	}

	/**
	 * Reads who holds the permits of {@code key}.
	 * @param key the key
	 * @return the holders
	 */
	public Holders holders(String key) {
		return this.store.holders(this.bucket, key);
	}

	/**
	 * Takes back every permit of {@code key}; see {@link ConcurrencyStore#releaseAll}.
	 * @param key the key
	 * @return the permits that were held
	 */
	public int releaseAll(String key) {
		return this.store.releaseAll(this.bucket, key);
	}

	/**
	 * Asks for a permit: of the store, else as the failure mode says.
	 * @param askAgain which failures the request rather asks again after (it waits), or
	 * {@code null} for none: such a failure returns {@code null}
	 * @param call the store call that decides the rate limits too, or {@code null}
	 * @param rate where the rate limits' decision goes when {@code call} made one
	 */
	private @Nullable ConcurrencyPermit ask(String key, String holder,
			@Nullable Predicate<RateLimitStoreException> askAgain, @Nullable OneCall call,
			@Nullable Decision @Nullable [] rate) {
		long asked = System.nanoTime();
		ConcurrencyStore store = this.store;
		ConcurrencyDecision decision;
		try {
			// Taken before the ask: a move by another thread meanwhile may not be
			// counted in the answer.
			boolean heldLocallyBefore = !this.heldLocally.isEmpty() && this.heldLocally.containsKey(key);
			// Not while permits counted locally wait to move: a move may refuse the
			// permit after the rate limits took theirs.
			HeldDecision held = (call != null && rate != null && !heldLocallyBefore && this.heldLocally.isEmpty())
					? askStore(holder, () -> call.decide(this.store, key, this.limit, holder)) : null;
			if (held != null && rate != null) {
				decision = held.permit();
				rate[0] = held.rate();
			}
			else {
				decision = askStore(holder, () -> this.store.acquire(this.bucket, key, this.limit, holder));
			}
			if (heldLocallyBefore || !this.heldLocally.isEmpty()) {
				decision = countingHeldLocally(key, holder, decision, heldLocallyBefore);
			}
		}
		catch (RateLimitStoreException ex) {
			if (askAgain != null && askAgain.test(ex)) {
				return null;
			}
			this.observer.onStoreFailure(this.bucket);
			if (this.onStoreFailure == OnStoreFailure.REJECT) {
				throw (ex instanceof StoreUnavailableException unavailable) ? unavailable
						: new StoreUnavailableException("Concurrency limit '" + this.bucket + "' could not be decided",
								ex);
			}
			logger.log(Level.FINE, "Concurrency limit '" + this.bucket + "' could not be decided: "
					+ ((this.onStoreFailure == OnStoreFailure.ALLOW) ? "allowed" : "counted in this JVM"), ex);
			if (this.onStoreFailure == OnStoreFailure.ALLOW) {
				return new ConcurrencyPermit(this.bucket, key, holder,
						new ConcurrencyDecision(true, 0, this.limit.permits(), 0, 0), this.limit.lease().toNanos(),
						asked);
			}
			store = this.local;
			decision = acquireLocally(key, holder);
		}
		if (!decision.acquired()) {
			decision = withLikelyWait(decision);
		}
		ConcurrencyPermit permit = new ConcurrencyPermit(this.bucket, key, holder, decision,
				this.limit.lease().toNanos(), asked);
		if (decision.acquired()) {
			Holding holding = (store == this.store) ? new HeldInStore(key, holder) : new HeldLocally(key, holder);
			Runnable stop = this.renewer.renew(holding::renew, this.limit, permit, this.observer);
			permit.onRelease(() -> {
				recordHold(System.nanoTime() - asked);
				boolean held;
				try {
					held = holding.release();
				}
				catch (RateLimitStoreException ex) {
					// A dropped connection must not keep the key's permit until its lease
					// ends: a trial's tenant was refused for 30 s with nothing running.
					logger.log(Level.FINE, "Could not release " + permit + "; trying again", ex);
					this.renewer.retryWithinLease(holding::release, permit, (failure) -> logger.log(Level.WARNING,
							"Could not release " + permit + " within its lease: it came back when its lease ended",
							failure));
					this.observer.onRelease(this.bucket, true);
					return false;
				}
				if (!held) {
					logger.log(Level.WARNING, "Released " + permit
							+ ", whose lease had ended (its instance stopped, or the store could not be reached,"
							+ " for longer than the lease; the store restarted empty; or an operator released the"
							+ " key): another call may have held its permit meanwhile");
				}
				this.observer.onRelease(this.bucket, held);
				return held;
			}, stop);
		}
		return permit;
	}

	/**
	 * Returns a refusal whose retry estimate is when a permit is likely free: the average
	 * hold of this instance's calls of the bucket divided by the calls in flight (calls
	 * end one after another), when that comes before the earliest lease end the store
	 * gave (which a renewed lease keeps about a lease away, however short the calls).
	 */
	private ConcurrencyDecision withLikelyWait(ConcurrencyDecision refused) {
		long hold = this.averageHoldNanos.get();
		if (hold == 0 || refused.inFlight() < 1) {
			return refused;
		}
		long likely = Math.max(1, TimeUnit.NANOSECONDS.toMicros(hold) / refused.inFlight());
		return (likely < refused.retryAfterMicros())
				? new ConcurrencyDecision(false, refused.inFlight(), refused.permits(), refused.expiredLeases(), likely)
				: refused;
	}

	private void recordHold(long nanos) {
		// An exponential moving average with a weight of 1/8: recent calls count most.
		this.averageHoldNanos.accumulateAndGet(Math.max(1, nanos),
				(average, sample) -> (average == 0) ? sample : average + (sample - average) / 8);
	}

	/**
	 * Asks the store, again when an ask that was sent fails: a slow answer (a cold
	 * instance, a busy machine) is no outage, and counting in this JVM then would let
	 * every instance admit its share beside the permits held in the store.
	 */
	private <T> T askStore(String holder, Supplier<T> call) {
		for (int ask = 1;; ask++) {
			try {
				return call.get();
			}
			catch (RateLimitStoreException ex) {
				if (ask >= ASKS || !ex.mayHaveRun()) {
					throw ex;
				}
				logger.log(Level.FINE, "Concurrency limit '" + this.bucket + "' asked again for " + holder, ex);
			}
		}
	}

	/**
	 * Takes a permit in this JVM while the store cannot answer: of this instance's share
	 * of the permits (rounded up), less those it holds in the store, whose calls still
	 * run. So the instances together hold about the limit, not a share each beside what
	 * the store holds.
	 */
	private ConcurrencyDecision acquireLocally(String key, String holder) {
		int instances = Math.max(1, this.instances.getAsInt());
		int share = (this.limit.permits() + instances - 1) / instances;
		int free = share - this.heldInStore.getOrDefault(key, 0);
		if (free <= 0) {
			return new ConcurrencyDecision(false, share, share, 0, LOCAL_RETRY_MICROS);
		}
		return this.local.acquire(this.bucket, key, new ConcurrencyLimit(free, this.limit.lease()), holder);
	}

	/**
	 * Moves the permits of the key this instance counted locally (during an outage) to
	 * the store, which answered again, and gives back the permit just granted if the key
	 * is then over its limit: the store, not counting them, could grant more than the
	 * limit (a trial after a Redis restart ran 3 exports of 2 for 15 s).
	 */
	private ConcurrencyDecision countingHeldLocally(String key, String holder, ConcurrencyDecision decision,
			boolean heldLocallyBefore) {
		Set<HeldLocally> locals = this.heldLocally.get(key);
		if (locals != null) {
			locals.forEach(HeldLocally::move);
		}
		storeAnswersAgain();
		if (!heldLocallyBefore || !decision.acquired()) {
			return decision;
		}
		// Counted by the store, which counts what other instances moved meanwhile too.
		int inFlight = this.store.holders(this.bucket, key).count();
		if (inFlight <= this.limit.permits()) {
			return decision;
		}
		this.store.release(this.bucket, key, holder);
		return new ConcurrencyDecision(false, inFlight - 1, this.limit.permits(), decision.expiredLeases(),
				LOCAL_RETRY_MICROS);
	}

	private void countHeldInStore(String key, int change) {
		this.heldInStore.compute(key, (k, count) -> {
			int held = ((count != null) ? count : 0) + change;
			return (held > 0) ? held : null;
		});
	}

	private static String nextHolder() {
		return INSTANCE + ":" + sequence.incrementAndGet();
	}

	/**
	 * A store call that decides a request's rate limits and takes a permit of its
	 * concurrency limit, of the same bucket and key, at once (e.g. through
	 * {@link RateAndConcurrencyStore#decideHolding}).
	 */
	@FunctionalInterface
	public interface OneCall {

		/**
		 * Makes the call.
		 * @param permits the store this limiter keeps its permits in
		 * @param key the key
		 * @param limit the concurrency limit
		 * @param holder who takes the permit
		 * @return what was decided, or {@code null} when the store cannot decide both at
		 * once: the permit is then taken alone
		 * @throws RateLimitStoreException when the store cannot answer
		 */
		@Nullable HeldDecision decide(ConcurrencyStore permits, String key, ConcurrencyLimit limit, String holder);

	}

	/**
	 * A permit asked for with the rate limits' decision in the same call.
	 *
	 * @param permit the permit: not {@link ConcurrencyPermit#acquired() acquired} when no
	 * permit was free, or when the rate limits refused the request
	 * @param rate the rate limits' decision, or {@code null} when the call made none: no
	 * permit was free (nothing is to be decided), or the permit was taken alone (the
	 * caller decides the rate limits)
	 */
	public record WithDecision(ConcurrencyPermit permit, @Nullable Decision rate) {

	}

	/**
	 * Where an acquired permit is kept: renewed and released there.
	 */
	private interface Holding {

		boolean renew();

		boolean release();

	}

	/** A permit in the shared store, counted against this instance's share. */
	private final class HeldInStore implements Holding {

		private final String key;

		private final String holder;

		private volatile boolean released;

		HeldInStore(String key, String holder) {
			this.key = key;
			this.holder = holder;
			countHeldInStore(key, 1);
		}

		@Override
		public boolean renew() {
			return ConcurrencyLimiter.this.store.renew(ConcurrencyLimiter.this.bucket, this.key,
					ConcurrencyLimiter.this.limit, this.holder);
		}

		@Override
		public boolean release() {
			// Once: a release that failed is made again.
			if (!this.released) {
				this.released = true;
				countHeldInStore(this.key, -1);
			}
			return ConcurrencyLimiter.this.store.release(ConcurrencyLimiter.this.bucket, this.key, this.holder);
		}

	}

	/**
	 * A permit taken in this JVM while the shared store failed. Its first renewal that
	 * reaches the store again moves it there, whatever the key's count (its call runs
	 * already): the other instances then count it, so the fleet is back to the limit
	 * within a third of a lease of the store's recovery, not only once the calls that
	 * began during the outage end.
	 */
	private final class HeldLocally implements Holding {

		private final String key;

		private final String holder;

		private boolean moved;

		private boolean released;

		HeldLocally(String key, String holder) {
			this.key = key;
			this.holder = holder;
			ConcurrencyLimiter.this.heldLocally.computeIfAbsent(key, (k) -> ConcurrentHashMap.newKeySet()).add(this);
		}

		/**
		 * Moves the permit to the store now, if it is still held here.
		 * @return {@code true} when this call moved it
		 */
		synchronized boolean move() {
			if (this.released || this.moved) {
				return false;
			}
			ConcurrencyLimiter limiter = ConcurrencyLimiter.this;
			try {
				ConcurrencyLimit whateverTheCount = new ConcurrencyLimit(ConcurrencyLimit.MAX_PERMITS,
						limiter.limit.lease());
				if (!limiter.store.acquire(limiter.bucket, this.key, whateverTheCount, this.holder).acquired()) {
					return false;
				}
			}
			catch (RateLimitStoreException ex) {
				logger.log(Level.FINE, "Concurrency limit '" + limiter.bucket + "': the store still fails", ex);
				return false;
			}
			countHeldInStore(this.key, 1);
			this.moved = true;
			forget();
			limiter.local.release(limiter.bucket, this.key, this.holder);
			logger.log(Level.FINE, "Concurrency limit '" + limiter.bucket + "': " + this.holder
					+ ", taken in this JVM during an outage, is now held in the store");
			return true;
		}

		private void forget() {
			ConcurrencyLimiter.this.heldLocally.computeIfPresent(this.key, (k, set) -> {
				set.remove(this);
				return set.isEmpty() ? null : set;
			});
		}

		/**
		 * Synchronized with {@link #release}: a renewal that moved the permit after its
		 * release would leave it held in the store until its lease ends.
		 */
		@Override
		public synchronized boolean renew() {
			ConcurrencyLimiter limiter = ConcurrencyLimiter.this;
			if (this.released) {
				// Released while this renewal waited: nothing to keep, and nothing lost.
				return true;
			}
			if (this.moved) {
				return limiter.store.renew(limiter.bucket, this.key, limiter.limit, this.holder);
			}
			return move() || limiter.local.renew(limiter.bucket, this.key, limiter.limit, this.holder);
		}

		@Override
		public synchronized boolean release() {
			ConcurrencyLimiter limiter = ConcurrencyLimiter.this;
			boolean again = this.released;
			this.released = true;
			forget();
			if (this.moved) {
				// Once: a release that failed is made again.
				if (!again) {
					countHeldInStore(this.key, -1);
				}
				return limiter.store.release(limiter.bucket, this.key, this.holder);
			}
			boolean held = limiter.local.release(limiter.bucket, this.key, this.holder);
			try {
				// An ask that timed out may have run in the store since (a stalled Redis
				// runs what it was sent once it wakes up): its permit goes back now, not
				// when its lease ends.
				limiter.store.release(limiter.bucket, this.key, this.holder);
			}
			catch (RateLimitStoreException ex) {
				logger.log(Level.FINE, "Concurrency limit '" + limiter.bucket + "': the store still fails", ex);
			}
			return held;
		}

	}

	/** Tells every observer; one that throws is logged. */
	private record Observers(List<ConcurrencyObserver> observers) implements ConcurrencyObserver {

		@Override
		public void onAcquire(String bucket, ConcurrencyDecision decision, boolean waited) {
			each((observer) -> observer.onAcquire(bucket, decision, waited));
		}

		@Override
		public void onRelease(String bucket, boolean held) {
			each((observer) -> observer.onRelease(bucket, held));
		}

		@Override
		public void onLeaseLost(String bucket) {
			each((observer) -> observer.onLeaseLost(bucket));
		}

		@Override
		public void onStoreFailure(String bucket) {
			each((observer) -> observer.onStoreFailure(bucket));
		}

		private void each(java.util.function.Consumer<ConcurrencyObserver> call) {
			for (ConcurrencyObserver observer : this.observers) {
				try {
					call.accept(observer);
				}
				catch (RuntimeException ex) {
					logger.log(Level.WARNING, "Concurrency observer " + observer.getClass().getName() + " failed", ex);
				}
			}
		}

	}

}
