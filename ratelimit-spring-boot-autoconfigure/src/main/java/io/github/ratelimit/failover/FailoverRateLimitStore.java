package io.github.ratelimit.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyStore;
import io.github.ratelimit.concurrency.HeldDecision;
import io.github.ratelimit.concurrency.RateAndConcurrencyStore;
import io.github.ratelimit.status.BreakerState;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.status.StoreStatus;
import io.github.ratelimit.status.StoreStatusSource;
import io.github.ratelimit.store.Heartbeat;
import io.github.ratelimit.store.PartialStoreOutageException;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RejectionCache;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreReconnectedException;
import io.github.ratelimit.store.StoreArguments;
import io.github.ratelimit.store.StoreUnavailableException;

/**
 * Puts a {@link CircuitBreaker} in front of a store (Redis) and applies the failure mode
 * while it fails: {@code fallback} decides with a per-instance in-memory store,
 * {@code open} allows, {@code closed} throws {@link StoreUnavailableException}.
 * <p>
 * One request, one decision: a decision made while the store failed is marked
 * {@link Decision.Origin#FALLBACK}, and
 * {@link #refund(String, String, List, long, Decision)} gives its permits back to the
 * store that took them, never to the other one. In {@code fallback} and {@code open}
 * modes the fallback store enforces (or, in {@code open} mode, only counts) each limit
 * divided by the number of instances that share it: a fixed number
 * ({@link Builder#instances(int)}), or the instances the store's heartbeat last counted
 * ({@link #heartbeat(Heartbeat)}). The decisions report what it counted, so
 * {@code remaining} is this instance's share, never a made-up full limit.
 * <p>
 * A glitch does not hand out a fresh limit: a key starts on the fallback from what this
 * instance last heard of it from the store (what remained, divided among the instances),
 * what the fallback admits is written back to the store once it answers again (before the
 * key is decided there again), and when the store lost its data, the usage last heard of
 * each key is written back too (see {@link OutageFallback}).
 * <p>
 * With a {@link RejectionCache} ({@link Builder#rejectionCache(RejectionCache)}), a
 * request the primary has just rejected is rejected again without a call until the
 * rejection's retry-after (or the cache's max age) has passed; refunds and resets through
 * this store forget it, and a reset through any instance (seen in the heartbeat) forgets
 * every rejection.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class FailoverRateLimitStore implements RateLimitStore, RateAndConcurrencyStore, StoreStatusSource {

	/**
	 * The instances alive are the most that this many heartbeats counted: a heartbeat
	 * just after Redis restarted empty, or one an instance was late for, counts fewer
	 * than there are.
	 */
	private static final int RECENT_HEARTBEATS = 6;

	/**
	 * How long the status stays degraded after a call failed for its key alone: health
	 * shows a partial outage while calls for its keys keep failing, and a little after.
	 */
	static final Duration PARTIAL_OUTAGE_SHOWN = Duration.ofSeconds(5);

	/** How long a write-back waits before it tries a failing primary again. */
	private static final long WRITE_BACK_RETRY_MILLIS = 100;

	/** How many keys' last decisions are remembered unless set otherwise. */
	public static final int DEFAULT_REMEMBERED_KEYS = 100_000;

	private static final Log logger = LogFactory.getLog(FailoverRateLimitStore.class);

	private static final String PROBE_BUCKET = "ratelimit-probe";

	private static final List<LimitSpec> PROBE_LIMITS = List.of(LimitSpec.of(1, "1s", Algorithm.FIXED_WINDOW));

	private final RateLimitStore primary;

	private final RateLimitStore fallback;

	private final FailureMode mode;

	private final CircuitBreaker breaker;

	private final FallbackLimits fallbackLimits;

	/** Whether the instance count is configured, rather than counted by the heartbeat. */
	private final boolean fixedInstances;

	private final LastHeard heard;

	private final OutageFallback outage;

	private final @Nullable RejectionCache rejections;

	private final BooleanSupplier primaryConnected;

	private final ThrottledFailureLog failures = new ThrottledFailureLog(logger, 10, TimeUnit.SECONDS);

	private final AtomicLong failureCount = new AtomicLong();

	/** The first line of the last failure's message, for the status while degraded. */
	private volatile @Nullable String lastFailure;

	/**
	 * Whether the last call to the primary failed: degraded even before the breaker
	 * opens.
	 */
	private volatile boolean lastCallFailed;

	/** Whether the last heartbeat failed: degraded though no request came. */
	private volatile boolean heartbeatFailed;

	/**
	 * When a call last failed for its key alone ({@link PartialStoreOutageException}), or
	 * {@code null}: degraded for {@link #PARTIAL_OUTAGE_SHOWN} after it, without opening
	 * the breaker for every key.
	 */
	private volatile @Nullable Long partialOutageNanos;

	private final LongSupplier nanoTime;

	private volatile @Nullable Heartbeat lastHeartbeat;

	private final RecentMaximum instanceCounts = new RecentMaximum(RECENT_HEARTBEATS);

	private final DataCheck dataCheck;

	/** Runs write-backs, off the request threads; created on first use. */
	private volatile @Nullable ScheduledExecutorService writer;

	private final AtomicBoolean writeBackQueued = new AtomicBoolean();

	/**
	 * Creates the store with the default breaker ({@link BreakerSettings#DEFAULTS}) and
	 * one instance.
	 * @param primary the store to protect
	 * @param fallback the store used in {@code fallback} mode while the primary fails
	 * @param mode the failure mode
	 */
	public FailoverRateLimitStore(RateLimitStore primary, RateLimitStore fallback, FailureMode mode) {
		this(builder(primary, fallback).failureMode(mode));
	}

	private FailoverRateLimitStore(Builder builder) {
		this.primary = builder.primary;
		this.fallback = builder.fallback;
		this.mode = builder.mode;
		this.fallbackLimits = new FallbackLimits((builder.instances != null) ? builder.instances : 1);
		this.fixedInstances = builder.instances != null;
		this.heard = new LastHeard(builder.rememberedKeys, builder.nanoTime);
		this.outage = new OutageFallback(this.fallback, this.fallbackLimits, this.heard);
		this.rejections = builder.rejections;
		this.writer = builder.writer;
		this.primaryConnected = builder.primaryConnected;
		this.dataCheck = new DataCheck(builder.nanoTime, this::checkFailed);
		this.nanoTime = builder.nanoTime;
		String name = this.primary.name();
		FailureMode mode = this.mode;
		this.breaker = new CircuitBreaker(builder.breaker, (from, to) -> logTransition(name, mode, from, to),
				builder.nanoTime);
		warmUp(this.fallback);
	}

	/**
	 * Logs a transition of the circuit breaker: opening and closing at WARN, the probes
	 * between (half-open, and open again when the probe failed) at DEBUG, since while the
	 * store stays down they come every second (a trial counted 32 lines in 17 s).
	 */
	private static void logTransition(String store, FailureMode mode, BreakerState from, BreakerState to) {
		String message = "Rate limit store '" + store + "' circuit breaker: " + from + " -> " + to
				+ ((to == BreakerState.OPEN)
						? " (requests use failure-mode " + mode.name().toLowerCase(Locale.ROOT) + ")" : "");
		boolean probe = to == BreakerState.HALF_OPEN || from == BreakerState.HALF_OPEN && to == BreakerState.OPEN;
		if (probe) {
			logger.debug(message);
		}
		else {
			logger.warn(message);
		}
	}

	/**
	 * Starts a builder.
	 * @param primary the store to protect
	 * @param fallback the per-instance store used while the primary fails
	 * @return a new builder
	 */
	public static Builder builder(RateLimitStore primary, RateLimitStore fallback) {
		return new Builder(primary, fallback);
	}

	/**
	 * Returns whether decisions currently bypass or fail the primary store.
	 * @return {@code true} while the breaker is not closed or the last call failed
	 */
	public boolean isDegraded() {
		// Half-open counts: only the probe calls reach the primary.
		return this.breaker.state() != BreakerState.CLOSED || this.lastCallFailed || this.heartbeatFailed;
	}

	/**
	 * Whether a call failed for its key alone lately (the part of the store holding it, a
	 * Redis Cluster master, is down), within {@link #PARTIAL_OUTAGE_SHOWN}.
	 * @return {@code true} during a partial outage
	 */
	public boolean isPartlyDown() {
		Long since = this.partialOutageNanos;
		return since != null && this.nanoTime.getAsLong() - since < PARTIAL_OUTAGE_SHOWN.toNanos();
	}

	/**
	 * Returns the circuit breaker.
	 * @return the breaker
	 */
	public CircuitBreaker circuitBreaker() {
		return this.breaker;
	}

	/**
	 * Returns the failure mode.
	 * @return the mode
	 */
	public FailureMode mode() {
		return this.mode;
	}

	/**
	 * Returns how many primary store calls failed since startup.
	 * @return the failure count
	 */
	public long failureCount() {
		return this.failureCount.get();
	}

	/**
	 * Returns how many instances share each limit: the fallback enforces each limit
	 * divided by it.
	 * @return the instance count
	 */
	public int instances() {
		return this.fallbackLimits.instances();
	}

	/**
	 * Returns how many keys have permits admitted by the fallback (or usage to restore)
	 * not yet written back to the primary.
	 * @return the number of keys
	 */
	public int pendingWriteBacks() {
		return this.outage.pendingKeys();
	}

	/**
	 * Takes in what the primary's heartbeat read (see {@link Heartbeat}): the instances
	 * alive (each limit is divided among them while the primary fails, unless the number
	 * is configured), a reset made through any instance (every rejection and usage
	 * remembered here is forgotten), and whether the primary lost its data (the usage
	 * heard of keys still in use is written back). A heartbeat answered also shows the
	 * primary works: the breaker closes, and what the fallback admitted is written back.
	 * @param heartbeat what the heartbeat read
	 */
	public void heartbeat(Heartbeat heartbeat) {
		Heartbeat last = this.lastHeartbeat;
		this.lastHeartbeat = heartbeat;
		this.heartbeatFailed = false;
		if (!this.fixedInstances) {
			this.fallbackLimits.instances(this.instanceCounts.add(heartbeat.instances()));
		}
		boolean lostData = last != null && !last.epoch().equals(heartbeat.epoch());
		if (lostData) {
			// The reset counter went with the data: its new value tells of no reset.
			// What was heard (and the rejections it implies) is written back.
			this.outage.storeLostItsData();
		}
		else if (last != null && last.resets() != heartbeat.resets()) {
			if (this.rejections != null) {
				this.rejections.clear();
			}
			this.heard.clear();
		}
		this.heard.dropExpired();
		this.dataCheck.passed();
		this.breaker.onStoreAnswered();
		writeBackIfPending();
	}

	/**
	 * Sets what tells whether the primary lost its data: a heartbeat made at once, which
	 * hands what it read to {@link #heartbeat(Heartbeat)}. Once the primary failed or
	 * {@linkplain #primaryReconnected() reconnected}, the next decision waits for it, so
	 * that no key is decided on a primary that restarted empty before the usage heard of
	 * it is written back. Without it, the periodic heartbeat tells, up to its interval
	 * later.
	 * @param heartbeat makes a heartbeat
	 */
	public void checkDataWith(Runnable heartbeat) {
		this.dataCheck.checkWith(heartbeat);
	}

	/**
	 * Takes note that the primary's connection was made anew: the server may have
	 * restarted, empty.
	 */
	public void primaryReconnected() {
		this.dataCheck.needed();
	}

	/**
	 * Takes note that the primary's heartbeat failed: the store is degraded until a
	 * heartbeat or a call succeeds, though no request came (health shows it).
	 * @param cause why it failed
	 */
	public void heartbeatFailed(RuntimeException cause) {
		this.lastFailure = firstLine(cause);
		if (!this.heartbeatFailed) {
			logger.debug("Rate limit store '" + this.primary.name() + "' heartbeat failed", cause);
		}
		this.heartbeatFailed = true;
		if (cause instanceof PartialStoreOutageException) {
			// The fleet's keys are on a Redis Cluster master that is down: the other
			// masters' keys stay on Redis. Their data cannot be checked through that
			// master anyway (the epoch it keeps tells of that master alone), so a check
			// waiting for this heartbeat ends here rather than failing every decision.
			this.partialOutageNanos = this.nanoTime.getAsLong();
			this.dataCheck.passed();
			return;
		}
		this.dataCheck.needed();
	}

	/**
	 * Peeks at a key of its own through the breaker when degraded: a success closes the
	 * breaker (or counts as one of its probes), and the status shows it.
	 */
	@Override
	public StoreStatus probe() {
		if (isDegraded()) {
			try {
				peek(PROBE_BUCKET, "", PROBE_LIMITS);
			}
			catch (RuntimeException ex) {
				logger.debug("Rate limit store probe failed", ex);
			}
		}
		return status();
	}

	@Override
	public StoreStatus status() {
		boolean degraded = isDegraded() || isPartlyDown();
		return new StoreStatus(this.primary.name(), this.mode, degraded, this.failureCount.get(), this.breaker.state(),
				(this.rejections != null) ? this.rejections.answered() : 0, instances(),
				degraded ? this.lastFailure : null);
	}

	/**
	 * Returns the protected store.
	 * @return the primary store
	 */
	public RateLimitStore primary() {
		return this.primary;
	}

	@Override
	public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		return decide(bucket, key, limits, cost, maxDelayMicros, false);
	}

	/**
	 * Decides; {@code again} for the one call made again after the primary's connection
	 * was made anew while the first waited for it (see
	 * {@link StoreReconnectedException}).
	 */
	private Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros,
			boolean again) {
		StoreArguments.check(bucket, key, limits, cost);
		Decision known = answerLocally(bucket, key, limits, cost, maxDelayMicros);
		if (known != null) {
			return known;
		}
		if (!dataChecked()) {
			return degraded(bucket, key, limits, cost, maxDelayMicros, null);
		}
		// Still pending once written back: it waits for the other instances' write-backs.
		if (this.outage.pending(bucket, key) && (!writtenBack(bucket, key) || this.outage.pending(bucket, key))) {
			return pending(bucket, key, limits, cost, maxDelayMicros);
		}
		if (!this.breaker.tryAcquire()) {
			return degraded(bucket, key, limits, cost, maxDelayMicros, null);
		}
		long token = (this.rejections != null) ? this.rejections.token() : 0;
		Decision decision;
		try {
			decision = this.primary.decide(bucket, key, limits, cost, maxDelayMicros);
		}
		catch (StoreReconnectedException ex) {
			if (!again) {
				reconnectedMeanwhile();
				return decide(bucket, key, limits, cost, maxDelayMicros, true);
			}
			recordFailure(ex);
			return degraded(bucket, key, limits, cost, maxDelayMicros, ex);
		}
		catch (RateLimitStoreException ex) {
			recordFailure(ex);
			return degraded(bucket, key, limits, cost, maxDelayMicros, ex);
		}
		catch (RuntimeException ex) {
			this.breaker.onIgnored();
			throw ex;
		}
		recordSuccess();
		this.heard.record(bucket, key, limits, decision);
		remember(bucket, key, limits, cost, maxDelayMicros, decision, token);
		return decision;
	}

	/**
	 * Decides and takes the permit in one call of the primary while it works and decides
	 * the key itself, with the bookkeeping of {@link #decide}: a remembered rejection
	 * answers without a call (and takes no permit), a failure counts against the primary
	 * and is rethrown for the concurrency limiter's failure mode. Otherwise (the primary
	 * fails, its data is being checked, the key's fallback admissions are not written
	 * back yet) {@code null}: the permit and the decision are then asked for on their
	 * own, each as its failure mode says.
	 */
	@Override
	public @Nullable HeldDecision decideHolding(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, ConcurrencyStore permits, ConcurrencyLimit limit, String holder, boolean enforced) {
		if (!(this.primary instanceof RateAndConcurrencyStore both)) {
			return null;
		}
		StoreArguments.check(bucket, key, limits, cost);
		Decision known = answerLocally(bucket, key, limits, cost, maxDelayMicros);
		if (known != null) {
			// A rejected call in shadow mode runs, and needs its permit.
			return enforced ? new HeldDecision(new ConcurrencyDecision(false, 0, limit.permits(), 0, 0), known) : null;
		}
		if (isDegraded() || (this.dataCheck.pending() && this.breaker.state() != BreakerState.OPEN)) {
			return null;
		}
		long token = (this.rejections != null) ? this.rejections.token() : 0;
		// Rethrown: the limiter asks again for the same holder, which decides nothing
		// twice.
		HeldDecision held = onPrimary(bucket, key,
				() -> both.decideHolding(bucket, key, limits, cost, maxDelayMicros, permits, limit, holder, enforced));
		if (held == null) {
			return null;
		}
		Decision rate = held.rate();
		if (rate != null) {
			this.heard.record(bucket, key, limits, rate);
			remember(bucket, key, limits, cost, maxDelayMicros, rate, token);
		}
		return held;
	}

	/**
	 * Waits for the primary to be checked for lost data when it failed or reconnected
	 * since it last was (see {@link #checkDataWith}); on the caller's thread, at most the
	 * store's timeout. A check that fails counts as a failed call.
	 * @return {@code false} when the check failed: the request goes to the failure mode
	 */
	private boolean dataChecked() {
		if (!this.dataCheck.pending() || this.breaker.state() == BreakerState.OPEN) {
			return true;
		}
		return this.dataCheck.passes();
	}

	/**
	 * Writes back what the fallback admitted for a key, before the primary decides it
	 * again, when the primary works; on the caller's thread (at most the store's
	 * timeout). A write-back counts as a call to the primary.
	 * @return {@code true} when the key has nothing left to write back
	 */
	private boolean writtenBack(String bucket, String key) {
		if (this.breaker.state() != BreakerState.CLOSED) {
			return false;
		}
		boolean written = this.outage.writeBack(this.primary, bucket, key);
		if (written) {
			recordSuccess();
		}
		else {
			writeBackFailed();
		}
		return written;
	}

	/**
	 * Decides a key whose fallback admissions are not yet written back: on the fallback
	 * (its share, as during the outage), whatever the mode, until the write-back is done.
	 */
	private Decision pending(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
		Decision decision = this.outage.decide(bucket, key, limits, cost, maxDelayMicros, this.mode == FailureMode.OPEN,
				false);
		writeBackIfPending();
		return decision;
	}

	/**
	 * Answers from a remembered rejection only while the primary is known to work: once
	 * it fails (or its connection is known to be closed) the failure mode decides every
	 * request, as it would without the cache.
	 */
	private @Nullable Decision answerLocally(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		if (this.rejections == null || this.rejections.isEmpty() || isDegraded()
				|| !this.primaryConnected.getAsBoolean()) {
			return null;
		}
		return this.rejections.answer(bucket, key, limits, cost, maxDelayMicros);
	}

	private void remember(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros,
			Decision decision, long token) {
		if (this.rejections != null) {
			this.rejections.remember(bucket, key, limits, cost, maxDelayMicros, decision, token);
		}
	}

	private void forget(String bucket, String key) {
		if (this.rejections != null) {
			this.rejections.invalidate(bucket, key);
		}
	}

	@Override
	public CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		return decideAsync(bucket, key, limits, cost, maxDelayMicros, false);
	}

	private CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, boolean again) {
		CompletableFuture<Decision> invalid = StoreArguments.failedIfInvalid(bucket, key, limits, cost);
		if (invalid != null) {
			return invalid;
		}
		Decision known = answerLocally(bucket, key, limits, cost, maxDelayMicros);
		if (known != null) {
			return CompletableFuture.completedFuture(known);
		}
		if (this.dataCheck.pending() && this.breaker.state() != BreakerState.OPEN) {
			// Checked off the caller's thread (an event loop, maybe), then decided.
			try {
				return CompletableFuture.supplyAsync(this::dataChecked, writer())
					.thenCompose((checked) -> checked ? decideAsync(bucket, key, limits, cost, maxDelayMicros, again)
							: degradedAsync(bucket, key, limits, cost, maxDelayMicros, null));
			}
			catch (RejectedExecutionException ex) {
				return degradedAsync(bucket, key, limits, cost, maxDelayMicros, null);
			}
		}
		if (this.outage.pending(bucket, key)) {
			if (this.breaker.state() != BreakerState.CLOSED) {
				return CompletableFuture.completedFuture(pending(bucket, key, limits, cost, maxDelayMicros));
			}
			// Written back off the caller's thread (an event loop, maybe), then decided.
			try {
				return CompletableFuture.supplyAsync(() -> writtenBack(bucket, key), writer())
					.thenCompose((written) -> (written && !this.outage.pending(bucket, key))
							? decideAsync(bucket, key, limits, cost, maxDelayMicros, again)
							: CompletableFuture.completedFuture(pending(bucket, key, limits, cost, maxDelayMicros)));
			}
			catch (RejectedExecutionException ex) {
				// Closed meanwhile.
				return CompletableFuture.completedFuture(pending(bucket, key, limits, cost, maxDelayMicros));
			}
		}
		if (!this.breaker.tryAcquire()) {
			return degradedAsync(bucket, key, limits, cost, maxDelayMicros, null);
		}
		long token = (this.rejections != null) ? this.rejections.token() : 0;
		CompletableFuture<Decision> result = new CompletableFuture<>();
		this.primary.decideAsync(bucket, key, limits, cost, maxDelayMicros).whenComplete((decision, ex) -> {
			try {
				answer(result, bucket, key, limits, cost, maxDelayMicros, token, decision, ex, again);
			}
			catch (RuntimeException | Error unexpected) {
				// Thrown on the primary's I/O thread, it would reach no one and leave the
				// caller waiting for good (an asynchronous caller has no timeout of its
				// own).
				result.completeExceptionally(unexpected);
			}
		});
		return result;
	}

	/**
	 * Completes {@code result} with the primary's decision or, when the primary failed,
	 * the failure mode's answer.
	 */
	private void answer(CompletableFuture<Decision> result, String bucket, String key, List<LimitSpec> limits,
			long cost, long maxDelayMicros, long token, @Nullable Decision decision, @Nullable Throwable ex,
			boolean again) {
		if (ex == null) {
			recordSuccess();
			Decision made = Objects.requireNonNull(decision);
			this.heard.record(bucket, key, limits, made);
			remember(bucket, key, limits, cost, maxDelayMicros, made, token);
			result.complete(made);
			return;
		}
		Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
		if (cause instanceof StoreReconnectedException && !again) {
			reconnectedMeanwhile();
			decideAsync(bucket, key, limits, cost, maxDelayMicros, true).whenComplete((d, e) -> {
				if (e != null) {
					result.completeExceptionally(e);
				}
				else {
					result.complete(d);
				}
			});
			return;
		}
		if (cause instanceof RateLimitStoreException storeFailure) {
			recordFailure(storeFailure);
			degradedAsync(bucket, key, limits, cost, maxDelayMicros, storeFailure).whenComplete((d, e) -> {
				if (e != null) {
					result.completeExceptionally(e);
				}
				else {
					result.complete(d);
				}
			});
		}
		else {
			this.breaker.onIgnored();
			result.completeExceptionally(cause);
		}
	}

	private CompletionStage<Decision> degradedAsync(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros, @Nullable RateLimitStoreException cause) {
		try {
			return CompletableFuture.completedFuture(degraded(bucket, key, limits, cost, maxDelayMicros, cause));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives permits back without knowing who took them: to the primary store when the
	 * breaker lets a call through, else to the fallback. Prefer
	 * {@link #refund(String, String, List, long, Decision)}, which knows.
	 */
	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		if (refundToPrimary(bucket, key, limits, cost)) {
			return;
		}
		this.outage.refund(bucket, key, limits, cost);
	}

	/**
	 * Gives the permits of {@code admitted} back to the store that took them: the
	 * fallback for a {@link Decision.Origin#FALLBACK} decision, the primary otherwise. A
	 * refund the primary cannot take now (it fails, or the breaker is open) is dropped
	 * and logged: those permits stay taken until they expire, the strict side.
	 */
	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost, Decision admitted) {
		if (admitted.origin() == Decision.Origin.FALLBACK && this.outage.refund(bucket, key, limits, cost)) {
			return;
		}
		// A fallback decision already written back took its permits from the primary.
		if (!refundToPrimary(bucket, key, limits, cost)) {
			logger.debug("Rate limit store '" + this.primary.name() + "' is failing: " + cost + " permit(s) of bucket '"
					+ bucket + "' stay taken until they expire");
		}
	}

	private boolean refundToPrimary(String bucket, String key, List<LimitSpec> limits, long cost) {
		if (!this.breaker.tryAcquire()) {
			return false;
		}
		try {
			this.primary.refund(bucket, key, limits, cost);
		}
		catch (RateLimitStoreException ex) {
			forget(bucket, key);
			recordFailure(ex);
			return false;
		}
		catch (RuntimeException ex) {
			this.breaker.onIgnored();
			throw ex;
		}
		recordSuccess();
		forget(bucket, key);
		return true;
	}

	/**
	 * Takes the permits from the primary, or, while it fails (or the key's fallback
	 * admissions are not yet written back), from this instance's share, to be written
	 * back with them.
	 */
	@Override
	public void charge(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		StoreArguments.check(bucket, key, limits, costs);
		if (!takenByPrimary(bucket, key, () -> this.primary.charge(bucket, key, limits, costs))) {
			this.outage.charge(bucket, key, limits, costs);
		}
	}

	/**
	 * Takes permits on the primary unless it fails, its breaker is open, or the key's
	 * fallback admissions are not yet written back (they must reach it first).
	 * @return whether the primary took them
	 */
	private boolean takenByPrimary(String bucket, String key, Runnable take) {
		try {
			return onPrimary(bucket, key, () -> {
				take.run();
				return Boolean.TRUE;
			}) != null;
		}
		catch (RateLimitStoreException ex) {
			return false;
		}
	}

	/**
	 * Makes a call on the primary unless its breaker is open or the key's fallback
	 * admissions are not yet written back (they must reach it first), and counts its
	 * outcome for the breaker: a failure (rethrown) and an answer; a call that answers
	 * {@code null} (it did not reach the primary) counts for neither.
	 * @return the call's answer, or {@code null} when it was not made
	 * @throws RateLimitStoreException what the primary threw
	 */
	private <T> @Nullable T onPrimary(String bucket, String key, Supplier<@Nullable T> call) {
		if (this.outage.pending(bucket, key) || !this.breaker.tryAcquire()) {
			return null;
		}
		T answer;
		try {
			answer = call.get();
		}
		catch (RateLimitStoreException ex) {
			recordFailure(ex);
			throw ex;
		}
		catch (RuntimeException ex) {
			this.breaker.onIgnored();
			throw ex;
		}
		if (answer == null) {
			this.breaker.onIgnored();
		}
		else {
			recordSuccess();
		}
		return answer;
	}

	/**
	 * Takes the permits from the primary, into debt past the limit; while it fails (or
	 * the key's fallback admissions are not yet written back), from this instance's share
	 * as a {@link #charge}, written back with them: an outage keeps no debt, and a window
	 * counts such permits up to one limit beyond it.
	 * @return the primary's debt; 0 while it fails
	 */
	@Override
	public long owe(String bucket, String key, List<LimitSpec> limits, long permits) {
		StoreArguments.check(bucket, key, limits, permits);
		long[] owed = new long[1];
		if (takenByPrimary(bucket, key, () -> owed[0] = this.primary.owe(bucket, key, limits, permits))) {
			// A rejection remembered before the debt would answer with a retry-after that
			// the debt no longer keeps.
			forget(bucket, key);
			return owed[0];
		}
		long[] costs = new long[limits.size()];
		Arrays.fill(costs, permits);
		this.outage.charge(bucket, key, limits, costs);
		return 0;
	}

	/**
	 * Restores on the primary; while it fails, nothing is restored: only the primary
	 * knows whether it has the key.
	 */
	@Override
	public boolean restore(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		StoreArguments.check(bucket, key, limits, costs);
		if (!this.breaker.tryAcquire()) {
			return false;
		}
		try {
			boolean restored = this.primary.restore(bucket, key, limits, costs);
			recordSuccess();
			return restored;
		}
		catch (RateLimitStoreException ex) {
			recordFailure(ex);
			return false;
		}
		catch (RuntimeException ex) {
			this.breaker.onIgnored();
			throw ex;
		}
	}

	@Override
	public Decision peek(String bucket, String key, List<LimitSpec> limits) {
		if (this.breaker.tryAcquire()) {
			try {
				Decision decision = this.primary.peek(bucket, key, limits);
				recordSuccess();
				return decision;
			}
			catch (RateLimitStoreException ex) {
				recordFailure(ex);
			}
			catch (RuntimeException ex) {
				this.breaker.onIgnored();
				throw ex;
			}
		}
		return this.outage.peek(bucket, key, limits);
	}

	@Override
	public void reset(String bucket, String key, List<LimitSpec> limits) {
		this.outage.reset(bucket, key, limits);
		try {
			this.primary.reset(bucket, key, limits);
		}
		finally {
			forget(bucket, key);
		}
	}

	@Override
	public String name() {
		return this.primary.name();
	}

	@Override
	public void close() {
		ScheduledExecutorService writer = this.writer;
		if (writer != null) {
			writer.shutdownNow();
		}
		try {
			this.primary.close();
		}
		finally {
			this.fallback.close();
		}
	}

	/**
	 * Writes back, off the request threads, what the fallback admitted while the primary
	 * failed. A round of write-backs is a call to the primary like a decision: it waits
	 * for the breaker's permission (as a probe while it is half-open), and its outcome
	 * counts. Rounds go on while keys are pending, every
	 * {@value #WRITE_BACK_RETRY_MILLIS} ms while the primary fails.
	 */
	private void writeBackIfPending() {
		if (this.outage.pendingKeys() > 0 && this.writeBackQueued.compareAndSet(false, true)) {
			scheduleWriteBack(0);
		}
	}

	private void scheduleWriteBack(long delayMillis) {
		try {
			writer().schedule(this::writeBackRound, delayMillis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Closed meanwhile.
			this.writeBackQueued.set(false);
		}
	}

	private void writeBackRound() {
		if (this.outage.pendingKeys() == 0) {
			this.writeBackQueued.set(false);
			// A key decided on the fallback as the flag was cleared.
			if (this.outage.pendingKeys() > 0) {
				writeBackIfPending();
			}
			return;
		}
		boolean written = false;
		if (this.breaker.tryAcquire()) {
			written = this.outage.writeBack(this.primary);
			if (written) {
				this.lastCallFailed = false;
				this.breaker.onSuccess();
			}
			else {
				writeBackFailed();
			}
		}
		// Keys that only wait for the other instances' write-backs need no round at once.
		scheduleWriteBack((written && this.outage.writable()) ? 0 : WRITE_BACK_RETRY_MILLIS);
	}

	private ScheduledExecutorService writer() {
		ScheduledExecutorService writer = this.writer;
		if (writer == null) {
			synchronized (this) {
				writer = this.writer;
				if (writer == null) {
					writer = Executors.newSingleThreadScheduledExecutor((task) -> {
						Thread thread = new Thread(task, "ratelimit-write-back");
						thread.setDaemon(true);
						return thread;
					});
					this.writer = writer;
				}
			}
		}
		return writer;
	}

	/**
	 * Runs every algorithm of the fallback once, so that the first request of an outage
	 * does not also pay for class loading.
	 */
	private static void warmUp(RateLimitStore fallback) {
		for (Algorithm algorithm : Algorithm.values()) {
			List<LimitSpec> limits = List.of(LimitSpec.of(1, "1s", algorithm));
			fallback.peek("ratelimit-warm-up", "", limits);
		}
	}

	private static String firstLine(Throwable failure) {
		String message = failure.getMessage();
		return (message != null) ? message.lines().findFirst().orElse("") : failure.getClass().getSimpleName();
	}

	private void recordSuccess() {
		this.lastCallFailed = false;
		this.breaker.onSuccess();
		writeBackIfPending();
	}

	/**
	 * The call was not sent: the primary's connection was made anew while it waited. Not
	 * a failure of the primary; the call is made once more, after the check for lost data
	 * that a new connection calls for.
	 */
	private void reconnectedMeanwhile() {
		this.breaker.onIgnored();
		this.dataCheck.needed();
	}

	/** A check for lost data (a heartbeat) failed on the request path: a failed call. */
	private void checkFailed() {
		this.lastCallFailed = true;
		this.breaker.onFailure();
		this.failureCount.incrementAndGet();
	}

	private void writeBackFailed() {
		if (this.outage.lastFailurePartial()) {
			this.partialOutageNanos = this.nanoTime.getAsLong();
			this.breaker.onIgnored();
			return;
		}
		this.lastCallFailed = true;
		this.breaker.onFailure();
	}

	private void recordFailure(RateLimitStoreException ex) {
		this.lastFailure = firstLine(ex);
		if (ex instanceof PartialStoreOutageException) {
			// One Redis Cluster master down: its keys go to the failure mode, the others
			// stay on Redis. Neither the breaker nor the data check (the fleet's keys may
			// be on that master) is involved.
			this.partialOutageNanos = this.nanoTime.getAsLong();
			this.breaker.onIgnored();
			this.failureCount.incrementAndGet();
			this.failures.failure("Rate limit store '" + this.primary.name() + "' failed for some keys; using "
					+ "failure-mode " + this.mode.name().toLowerCase(Locale.ROOT) + " for them", ex);
			return;
		}
		this.lastCallFailed = true;
		this.dataCheck.needed();
		this.breaker.onFailure();
		this.failureCount.incrementAndGet();
		this.failures.failure("Rate limit store '" + this.primary.name() + "' failed; using failure-mode "
				+ this.mode.name().toLowerCase(Locale.ROOT), ex);
	}

	private Decision degraded(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros,
			@Nullable RateLimitStoreException cause) {
		if (this.mode == FailureMode.CLOSED) {
			throw new StoreUnavailableException("Rate limit store '" + this.primary.name()
					+ "' is unavailable and ratelimit.failure-mode is closed", cause);
		}
		return this.outage.decide(bucket, key, limits, cost, maxDelayMicros, this.mode == FailureMode.OPEN,
				cause != null && cause.mayHaveRun());
	}

	/**
	 * The largest of the last few numbers added, at least 1.
	 */
	private static final class RecentMaximum {

		private final int[] recent;

		private int next;

		RecentMaximum(int size) {
			this.recent = new int[size];
		}

		synchronized int add(int value) {
			this.recent[this.next] = value;
			this.next = (this.next + 1) % this.recent.length;
			int max = 1;
			for (int count : this.recent) {
				max = Math.max(max, count);
			}
			return max;
		}

	}

	/**
	 * Builds a {@link FailoverRateLimitStore}.
	 */
	public static final class Builder {

		private final RateLimitStore primary;

		private final RateLimitStore fallback;

		private FailureMode mode = FailureMode.FALLBACK;

		private BreakerSettings breaker = BreakerSettings.DEFAULTS;

		private @Nullable Integer instances;

		private int rememberedKeys = DEFAULT_REMEMBERED_KEYS;

		private LongSupplier nanoTime = System::nanoTime;

		private @Nullable ScheduledExecutorService writer;

		private @Nullable RejectionCache rejections;

		private BooleanSupplier primaryConnected = () -> true;

		private Builder(RateLimitStore primary, RateLimitStore fallback) {
			this.primary = Objects.requireNonNull(primary, "'primary' must not be null");
			this.fallback = Objects.requireNonNull(fallback, "'fallback' must not be null");
		}

		/**
		 * Sets what happens while the primary fails; {@code fallback} by default.
		 * @param mode the failure mode
		 * @return this builder
		 */
		public Builder failureMode(FailureMode mode) {
			this.mode = Objects.requireNonNull(mode, "'mode' must not be null");
			return this;
		}

		/**
		 * Sets when the circuit breaker opens; {@link BreakerSettings#DEFAULTS} by
		 * default.
		 * @param breaker the settings
		 * @return this builder
		 */
		public Builder breaker(BreakerSettings breaker) {
			this.breaker = Objects.requireNonNull(breaker, "'breaker' must not be null");
			return this;
		}

		/**
		 * Sets how many instances share each limit. While the primary fails, each
		 * instance's fallback enforces every limit and burst divided by this number,
		 * rounded up, so that together they admit about one limit. Unset by default: the
		 * instances the primary's {@link FailoverRateLimitStore#heartbeat heartbeat} last
		 * counted, 1 before the first.
		 * @param instances the instance count, at least 1
		 * @return this builder
		 */
		public Builder instances(int instances) {
			if (instances < 1) {
				throw new IllegalArgumentException("instances must be at least 1 but was " + instances);
			}
			this.instances = instances;
			return this;
		}

		/**
		 * Sets how many keys this instance remembers what the primary last decided of, to
		 * start them from on the fallback and to write back to a primary that lost its
		 * data; {@value FailoverRateLimitStore#DEFAULT_REMEMBERED_KEYS} by default.
		 * @param rememberedKeys the number of keys, at least 1
		 * @return this builder
		 */
		public Builder rememberedKeys(int rememberedKeys) {
			if (rememberedKeys < 1) {
				throw new IllegalArgumentException("rememberedKeys must be at least 1 but was " + rememberedKeys);
			}
			this.rememberedKeys = rememberedKeys;
			return this;
		}

		/**
		 * Answers requests the primary has just rejected from this cache until their
		 * retry-after has passed, without a call; none by default.
		 * @param rejections the cache, or {@code null} for none
		 * @return this builder
		 */
		public Builder rejectionCache(@Nullable RejectionCache rejections) {
			this.rejections = rejections;
			return this;
		}

		/**
		 * Tells whether the primary's connection is known to be open, so that remembered
		 * rejections are not answered once it is known to be gone; always {@code true} by
		 * default.
		 * @param primaryConnected whether the primary is connected
		 * @return this builder
		 */
		public Builder primaryConnected(BooleanSupplier primaryConnected) {
			this.primaryConnected = Objects.requireNonNull(primaryConnected, "'primaryConnected' must not be null");
			return this;
		}

		/**
		 * Sets what runs the write-backs, for tests; one of the store's own by default.
		 */
		Builder writer(ScheduledExecutorService writer) {
			this.writer = writer;
			return this;
		}

		/** Sets the breaker's clock, for tests. */
		Builder nanoTime(LongSupplier nanoTime) {
			this.nanoTime = nanoTime;
			return this;
		}

		/**
		 * Builds the store.
		 * @return the store
		 */
		public FailoverRateLimitStore build() {
			return new FailoverRateLimitStore(this);
		}

	}

}
