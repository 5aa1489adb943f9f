package io.github.ratelimit.acquire;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.acquire.DecisionTracer.DecisionTrace;
import io.github.ratelimit.acquire.DecisionTracer.Scope;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.concurrency.RateAndConcurrencyStore;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Takes the permits of a call: the one place where requests become decisions. The servlet
 * filter, the {@code @RateLimited} interceptor (blocking, {@code CompletionStage},
 * Reactor) and the direct {@link io.github.ratelimit.RateLimiter} all call it, so they
 * decide, wait, give back, apply shadow mode and report alike.
 * <ul>
 * <li>The requests of a call are decided in order. A call proceeds only if every bucket
 * lets it: when one rejects, what the buckets before it granted is given back, and no
 * later bucket is asked.</li>
 * <li>A request whose {@link WaitPolicy} waits for permits asks again after the
 * rejection's retry-after, until it is allowed or its {@code maxWait} would be exceeded;
 * a wait known to be in vain is never started.</li>
 * <li>Once every request is allowed, the call waits for the latest leaky bucket slot it
 * was given, so that it proceeds at the shaped rate.</li>
 * <li>A rejection by a bucket in {@link LimitMode#SHADOW shadow mode} lets the call
 * proceed; it took nothing.</li>
 * <li>Each request's final result is told to the {@link RateLimitObserver observers}
 * once; a store failure is told to them, and what earlier buckets granted is given back
 * before the failure is rethrown.</li>
 * <li>A {@link DecisionTracer}, when there is one, follows each request from its first
 * store call to its final result: its trace is current on the calling thread while the
 * store is called, and each wait for a permit is a wait of that trace.</li>
 * </ul>
 * All waiting goes through one {@link Waiter}, on its clock: tests pass a virtual one and
 * never sleep.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class Acquirer {

	private static final Logger logger = System.getLogger(Acquirer.class.getName());

	/** A {@code proceedAtMicros} for a call that has no leaky bucket delay to wait. */
	private static final long NO_DELAY = Long.MIN_VALUE;

	/** An {@code askedAtMicros} for which the clock was not read. */
	private static final long UNREAD = Long.MIN_VALUE;

	private final RateLimitStore store;

	private final Waiter waiter;

	private final TimeSource clock;

	private final RateLimitObserver[] observers;

	private final @Nullable DecisionTracer tracer;

	private Acquirer(Builder builder) {
		this.store = builder.store;
		this.waiter = builder.waiter;
		this.clock = builder.waiter.clock();
		this.observers = builder.observers.toArray(new RateLimitObserver[0]);
		this.tracer = builder.tracer;
	}

	/**
	 * Starts a builder for an acquirer on {@code store}.
	 * @param store the store that decides
	 * @return a new builder
	 */
	public static Builder builder(RateLimitStore store) {
		return new Builder(store);
	}

	/**
	 * Returns the store decisions are made on.
	 * @return the store
	 */
	public RateLimitStore store() {
		return this.store;
	}

	/**
	 * Returns the waiter calls wait through.
	 * @return the waiter
	 */
	public Waiter waiter() {
		return this.waiter;
	}

	/**
	 * Decides one request once, on the calling thread, without waiting: a rejection is
	 * final whatever the request's {@link WaitPolicy}, and a leaky bucket delay is the
	 * caller's to wait ({@link Decision#delay()}).
	 * @param request the request
	 * @return its result
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * decide
	 */
	public RateLimitResult tryAcquire(PermitRequest request) {
		// Not through decide: without its loop and Step, the compiler keeps the result of
		// a direct call off the heap when the caller only reads it.
		long deadline = request.waitPolicy().deadline(this.clock);
		DecisionTrace trace = trace(request);
		long started = startTimer();
		Decision decision = ask(request, trace, deadline, askedAt(deadline), started);
		return result(request, trace, decision, elapsed(started), false);
	}

	/**
	 * Takes every permit of a call, or none, on the calling thread: waits for permits as
	 * each request's policy allows, then for the latest leaky bucket slot.
	 * <p>
	 * An interrupt ends a wait for a permit: that request is rejected and the interrupt
	 * flag stays set. It does not cut a leaky bucket wait short (the slots are taken, and
	 * proceeding early would let a burst through); the flag is restored afterwards.
	 * @param requests the requests of the call, in the order they are decided
	 * @return the acquisition, once the call may proceed (or is rejected)
	 * @throws RuntimeException what the store threw (e.g. a
	 * {@link io.github.ratelimit.store.StoreUnavailableException}), after giving back
	 * what earlier requests took
	 */
	public Acquisition acquire(List<PermitRequest> requests) {
		List<RateLimitResult> results = new ArrayList<>(requests.size());
		long proceedAt = NO_DELAY;
		for (PermitRequest request : requests) {
			Step step;
			try {
				step = decide(request, true);
			}
			catch (RuntimeException ex) {
				// The store failed: what earlier buckets granted must not count either.
				refund(results);
				throw ex;
			}
			results.add(step.result());
			if (!step.result().proceeds()) {
				refund(results);
				return Acquisition.rejected(results);
			}
			proceedAt = Math.max(proceedAt, step.proceedAtMicros());
		}
		awaitDelay(proceedAt);
		return Acquisition.granted(results);
	}

	/**
	 * Takes a concurrency permit and the permits of a request of the same bucket and key,
	 * on the calling thread: the permit first, as a request limited by both needs, and in
	 * one store call with the decision when the store can
	 * ({@link RateAndConcurrencyStore}; both stores of this library can). A request
	 * refused for lack of a permit takes nothing from the rate limits, and its rate
	 * limits' observers are told nothing; one the rate limits reject holds no permit.
	 * Otherwise as {@link #acquire(List)} with the one request, leaky bucket wait
	 * included. The permit and the decision are two calls when the request waits for
	 * permits, the limiter's bucket is another, the store cannot, or the limiter takes
	 * its permit alone (see
	 * {@link ConcurrencyLimiter#tryAcquire(String, ConcurrencyLimiter.OneCall)}).
	 * @param request the request
	 * @param limiter the concurrency limit of the request's bucket, keyed by the
	 * request's key
	 * @return the permit and, when one was free, the acquisition; the permit is held only
	 * when the acquisition is granted
	 * @throws RuntimeException what the store threw (e.g. a
	 * {@link io.github.ratelimit.store.StoreUnavailableException}), with no permit held
	 */
	public Holding acquireHolding(PermitRequest request, ConcurrencyLimiter limiter) {
		return acquireHolding(List.of(request), limiter, request.key());
	}

	/**
	 * Takes the concurrency permit of {@code key} and then the permits of a call's
	 * requests: as {@link #acquireHolding(PermitRequest, ConcurrencyLimiter)} in one
	 * store call when there is one request, of the limiter's bucket and of {@code key};
	 * otherwise the permit alone and then {@link #acquire(List)}, whose rejection gives
	 * the permit back. With no request, the acquisition is granted with no result.
	 * @param requests the requests of the call, in the order they are decided
	 * @param limiter the concurrency limit
	 * @param key the concurrency limit's key
	 * @return the permit and, when one was free, the acquisition; the permit is held only
	 * when the acquisition is granted
	 * @throws RuntimeException what the store threw, with no permit held
	 */
	public Holding acquireHolding(List<PermitRequest> requests, ConcurrencyLimiter limiter, String key) {
		RateAndConcurrencyStore both = oneCallFor(requests, limiter, key);
		if (both == null) {
			return acquireHoldingInTwoCalls(requests, limiter, key);
		}
		PermitRequest request = requests.get(0);
		HeldStep held = holdInOneCall(request, trace(request), limiter, both);
		awaitDelay(held.proceedAtMicros());
		return held.holding();
	}

	/**
	 * Like {@link #acquireHolding}, without blocking the calling thread: the store calls
	 * that take a permit block, so they run on {@code blockingCalls} (e.g. Reactor's
	 * {@code boundedElastic}), and waits are {@link Waiter#delay delays}. The returned
	 * stage completes on the {@link Waiter#executor() executor}.
	 * @param request the request
	 * @param limiter the concurrency limit of the request's bucket, keyed by the
	 * request's key
	 * @param blockingCalls runs the store calls that take a permit
	 * @return the permit and, when one was free, the acquisition, or a stage failed with
	 * what the store threw, with no permit held
	 */
	public CompletionStage<Holding> acquireHoldingAsync(PermitRequest request, ConcurrencyLimiter limiter,
			Executor blockingCalls) {
		return acquireHoldingAsync(List.of(request), limiter, request.key(), blockingCalls);
	}

	/**
	 * Like {@link #acquireHolding(List, ConcurrencyLimiter, String)}, without blocking
	 * the calling thread, as
	 * {@link #acquireHoldingAsync(PermitRequest, ConcurrencyLimiter, Executor)}.
	 * @param requests the requests of the call, in the order they are decided
	 * @param limiter the concurrency limit
	 * @param key the concurrency limit's key
	 * @param blockingCalls runs the store calls that take a permit
	 * @return the permit and, when one was free, the acquisition, or a stage failed with
	 * what the store threw, with no permit held
	 */
	public CompletionStage<Holding> acquireHoldingAsync(List<PermitRequest> requests, ConcurrencyLimiter limiter,
			String key, Executor blockingCalls) {
		RateAndConcurrencyStore both = oneCallFor(requests, limiter, key);
		if (both == null) {
			return CompletableFuture.supplyAsync(() -> limiter.tryAcquire(key), blockingCalls)
				.thenCompose((permit) -> permit.acquired() ? decideAsyncHolding(requests, permit)
						: CompletableFuture.completedFuture(new Holding(permit, null)));
		}
		// Started here: the caller's observation is the parent of the decision's.
		PermitRequest request = requests.get(0);
		DecisionTrace trace = trace(request);
		return CompletableFuture.supplyAsync(() -> holdInOneCall(request, trace, limiter, both), blockingCalls)
			.thenCompose((held) -> awaitDelayAsync(held.proceedAtMicros()).thenApply((done) -> held.holding()))
			.whenCompleteAsync((holding, failure) -> {
			}, this.waiter.executor());
	}

	/**
	 * Returns the store that decides the request and takes the permit in one call, or
	 * {@code null} when they take two: a call of no request or of several, a request of
	 * another key or bucket than the limiter's, one that waits for permits (each wait
	 * would ask both again), or a store that cannot.
	 */
	private @Nullable RateAndConcurrencyStore oneCallFor(List<PermitRequest> requests, ConcurrencyLimiter limiter,
			String key) {
		if (!(this.store instanceof RateAndConcurrencyStore both) || requests.size() != 1) {
			return null;
		}
		PermitRequest request = requests.get(0);
		return (!request.waitPolicy().waitsForPermits() && limiter.bucket().equals(request.bucket().name())
				&& key.equals(request.key())) ? both : null;
	}

	/**
	 * Takes the permit and decides the request in one store call (or, when the limiter
	 * takes its permit alone, in two), telling the observers; the leaky bucket wait is
	 * the caller's.
	 */
	private HeldStep holdInOneCall(PermitRequest request, @Nullable DecisionTrace trace, ConcurrencyLimiter limiter,
			RateAndConcurrencyStore both) {
		long deadline = request.waitPolicy().deadline(this.clock);
		long askedAt = askedAt(deadline);
		long started = startTimer();
		long maxDelay = WaitPolicy.maxDelay(deadline, askedAt);
		boolean enforced = request.bucket().mode() != LimitMode.SHADOW;
		ConcurrencyLimiter.WithDecision decided = askHolding(request, trace, limiter,
				(permits, key, limit, holder) -> both.decideHolding(request.bucket().name(), key, request.limits(),
						request.cost(), maxDelay, permits, limit, holder, enforced),
				started);
		ConcurrencyPermit permit = decided.permit();
		Decision decision = decided.rate();
		if (decision == null) {
			if (!permit.acquired()) {
				if (trace != null) {
					trace.discard();
				}
				return new HeldStep(new Holding(permit, null), NO_DELAY);
			}
			try {
				decision = ask(request, trace, deadline, askedAt, started);
			}
			catch (RuntimeException ex) {
				permit.release();
				throw ex;
			}
		}
		Step step = step(request, trace, decision, elapsed(started), false, askedAt);
		if (!step.result().proceeds()) {
			// Not taken when the store decided both; taken alone, it goes back.
			permit.release();
			return new HeldStep(new Holding(permit, Acquisition.rejected(List.of(step.result()))), NO_DELAY);
		}
		return new HeldStep(new Holding(permit, Acquisition.granted(List.of(step.result()))), step.proceedAtMicros());
	}

	private CompletionStage<Holding> decideAsyncHolding(List<PermitRequest> requests, ConcurrencyPermit permit) {
		return acquireAsync(requests).handle((acquisition, failure) -> {
			if (failure != null || !acquisition.granted()) {
				// A release is a store call: off the caller's thread.
				this.waiter.executor().execute(permit::release);
			}
			if (failure != null) {
				throw (failure instanceof CompletionException completion) ? completion
						: new CompletionException(failure);
			}
			return new Holding(permit, acquisition);
		});
	}

	/**
	 * Asks the limiter for its permit with the store call that decides the request too,
	 * with the request's trace current; a failure is told to the observers and the trace,
	 * and rethrown.
	 */
	private ConcurrencyLimiter.WithDecision askHolding(PermitRequest request, @Nullable DecisionTrace trace,
			ConcurrencyLimiter limiter, ConcurrencyLimiter.OneCall call, long started) {
		RuntimeException failure;
		Scope scope = (trace != null) ? trace.openScope() : null;
		try {
			return limiter.tryAcquire(request.key(), call);
		}
		catch (RuntimeException ex) {
			failure = ex;
		}
		finally {
			if (scope != null) {
				scope.close();
			}
		}
		failed(request.bucket(), trace, failure, elapsed(started));
		throw failure;
	}

	private Holding acquireHoldingInTwoCalls(List<PermitRequest> requests, ConcurrencyLimiter limiter, String key) {
		ConcurrencyPermit permit = limiter.tryAcquire(key);
		if (!permit.acquired()) {
			return new Holding(permit, null);
		}
		Acquisition acquisition;
		try {
			acquisition = acquire(requests);
		}
		catch (RuntimeException ex) {
			permit.release();
			throw ex;
		}
		if (!acquisition.granted()) {
			permit.release();
		}
		return new Holding(permit, acquisition);
	}

	/**
	 * Like {@link #acquire(List)}, without blocking the calling thread: decisions are the
	 * store's asynchronous ones, waits are {@link Waiter#delay delays}, refunds run on
	 * the {@link Waiter#executor() executor}. The returned stage is complete on return
	 * when nothing had to wait (an in-memory store, no delay); otherwise it completes on
	 * the executor, never on a store's I/O thread, so what the caller chains on it runs
	 * there.
	 * @param requests the requests of the call, in the order they are decided
	 * @return the acquisition, once the call may proceed (or is rejected), or a stage
	 * failed with what the store threw
	 */
	public CompletionStage<Acquisition> acquireAsync(List<PermitRequest> requests) {
		CompletableFuture<Acquisition> acquired = acquireAsync(requests, 0, new ArrayList<>(requests.size()), NO_DELAY)
			.toCompletableFuture();
		// whenCompleteAsync, not thenApplyAsync: a failure too must reach the caller on
		// the executor.
		return acquired.isDone() ? acquired : acquired.whenCompleteAsync((acquisition, failure) -> {
		}, this.waiter.executor());
	}

	/**
	 * Gives back the permits that results hold: those of earlier buckets when a later one
	 * rejects, or those a caller does not want counted (e.g. {@code refundWhen}). Results
	 * that hold none (rejections, leaky bucket slots) are skipped. A refund that fails is
	 * logged and otherwise ignored: the call's own outcome matters more than a permit.
	 * @param results the results whose permits to give back
	 */
	public void refund(List<RateLimitResult> results) {
		for (RateLimitResult result : results) {
			if (!result.refundable()) {
				continue;
			}
			try {
				giveBack(result.request(), result.decision());
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Could not give back " + result.request().cost() + " permit(s) of bucket '"
						+ result.bucket().name() + "'", ex);
			}
		}
	}

	/**
	 * Like {@link #refund(List)}, on the {@link Waiter#executor() executor}: the store
	 * call may block, and the caller may be a store's I/O thread.
	 * @param results the results whose permits to give back
	 * @return a stage that completes once done (at once when nothing is to be given back)
	 */
	public CompletionStage<Void> refundAsync(List<RateLimitResult> results) {
		if (results.stream().noneMatch(RateLimitResult::refundable)) {
			return CompletableFuture.completedFuture(null);
		}
		List<RateLimitResult> copy = List.copyOf(results);
		return CompletableFuture.runAsync(() -> refund(copy), this.waiter.executor());
	}

	/**
	 * Gives permits back without a decision to go by (the direct API's
	 * {@code RateLimiter.refund}).
	 * @param request the bucket, key, limits and cost to give back
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer
	 */
	public void refund(PermitRequest request) {
		giveBack(request, null);
	}

	/**
	 * Settles a call that reserved permits: it used {@code actual} where it took
	 * {@link PermitRequest#cost()}. Less gives the difference back; more takes the excess
	 * even past the limit, which puts the key into debt ({@link RateLimitStore#owe}); the
	 * same takes nothing. One store call at most. A reservation that was not allowed (a
	 * rejection, or one that shadow mode let through) took nothing, and settles nothing.
	 * Observers are told of every settlement.
	 * @param reserved the result of the reservation
	 * @param actual the permits the call really used, zero or more
	 * @throws IllegalArgumentException when {@code actual} is negative
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer (the reservation then stays charged at its cost)
	 */
	public void settle(RateLimitResult reserved, long actual) {
		if (actual < 0) {
			throw new IllegalArgumentException("a settlement must not be negative but was " + actual + " (bucket '"
					+ reserved.bucket().name() + "')");
		}
		if (!reserved.decision().allowed()) {
			return;
		}
		PermitRequest request = reserved.request();
		long estimate = request.cost();
		long owed = 0;
		if (actual < estimate) {
			PermitRequest returned = new PermitRequest(request.bucket(), request.key(), request.limits(),
					estimate - actual, request.waitPolicy());
			giveBack(returned, reserved.decision());
		}
		else if (actual > estimate) {
			owed = this.store.owe(request.bucket().name(), request.key(), request.limits(), actual - estimate);
		}
		for (RateLimitObserver observer : this.observers) {
			try {
				observer.onSettled(reserved, actual, owed);
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Rate limit observer " + observer.getClass().getName() + " failed", ex);
			}
		}
	}

	/**
	 * The one place permits go back to the store.
	 * @param request what was taken
	 * @param admitted the decision that took the permits, when known: a store that
	 * decides in more than one place (Redis or its fallback) gives them back where they
	 * were taken
	 */
	private void giveBack(PermitRequest request, @Nullable Decision admitted) {
		if (admitted != null) {
			this.store.refund(request.bucket().name(), request.key(), request.limits(), request.cost(), admitted);
		}
		else {
			this.store.refund(request.bucket().name(), request.key(), request.limits(), request.cost());
		}
	}

	/**
	 * Decides one request on the calling thread, asking again after each rejection that
	 * its policy waits out (when {@code mayWait}).
	 */
	private Step decide(PermitRequest request, boolean mayWait) {
		long deadline = request.waitPolicy().deadline(this.clock);
		DecisionTrace trace = trace(request);
		boolean waited = false;
		while (true) {
			long askedAt = askedAt(deadline);
			long started = startTimer();
			Decision decision = ask(request, trace, deadline, askedAt, started);
			long nanos = elapsed(started);
			long wait = mayWait ? retryWait(request, decision, deadline) : -1;
			if (wait >= 0) {
				Runnable waitEnds = (trace != null) ? trace.startWait(wait) : null;
				try {
					this.waiter.sleep(wait);
					waited = true;
					continue;
				}
				catch (InterruptedException ex) {
					// The caller is being told to stop: give up waiting, keep the flag.
					Thread.currentThread().interrupt();
				}
				finally {
					if (waitEnds != null) {
						waitEnds.run();
					}
				}
			}
			return step(request, trace, decision, nanos, waited, askedAt);
		}
	}

	/**
	 * Asks the store once, with the request's trace current; a failure is told to the
	 * observers and the trace, and rethrown.
	 */
	private Decision ask(PermitRequest request, @Nullable DecisionTrace trace, long deadline, long askedAt,
			long started) {
		RuntimeException failure;
		Scope scope = (trace != null) ? trace.openScope() : null;
		try {
			return this.store.decide(request.bucket().name(), request.key(), request.limits(), request.cost(),
					WaitPolicy.maxDelay(deadline, askedAt));
		}
		catch (RuntimeException ex) {
			failure = ex;
		}
		finally {
			if (scope != null) {
				scope.close();
			}
		}
		failed(request.bucket(), trace, failure, elapsed(started));
		throw failure;
	}

	private CompletionStage<Acquisition> acquireAsync(List<PermitRequest> requests, int index,
			List<RateLimitResult> results, long proceedAt) {
		if (index == requests.size()) {
			return awaitDelayAsync(proceedAt).thenApply((done) -> Acquisition.granted(results));
		}
		PermitRequest request = requests.get(index);
		long deadline = request.waitPolicy().deadline(this.clock);
		return decideAsync(request, trace(request), deadline, false).handle((step, failure) -> {
			if (failure != null) {
				// The store failed: what earlier buckets granted must not count either.
				return refundAsync(results)
					.<Acquisition>thenCompose((done) -> CompletableFuture.failedFuture(unwrap(failure)));
			}
			results.add(step.result());
			if (!step.result().proceeds()) {
				return refundAsync(results).thenApply((done) -> Acquisition.rejected(results));
			}
			return acquireAsync(requests, index + 1, results, Math.max(proceedAt, step.proceedAtMicros()));
		}).thenCompose(Function.identity());
	}

	/**
	 * The asynchronous twin of {@link #decide(PermitRequest, boolean)}: the same steps,
	 * with the store's asynchronous call and a delay instead of a sleep. Kept apart so
	 * that blocking callers, the most common, pay for no stages.
	 */
	private CompletionStage<Step> decideAsync(PermitRequest request, @Nullable DecisionTrace trace, long deadline,
			boolean waited) {
		long askedAt = askedAt(deadline);
		long started = startTimer();
		CompletionStage<Decision> decided;
		// Current while the call is sent: a client library that traces its commands
		// reads the parent on the sending thread.
		Scope scope = (trace != null) ? trace.openScope() : null;
		try {
			decided = this.store.decideAsync(request.bucket().name(), request.key(), request.limits(), request.cost(),
					WaitPolicy.maxDelay(deadline, askedAt));
		}
		catch (RuntimeException ex) {
			decided = CompletableFuture.failedFuture(ex);
		}
		finally {
			if (scope != null) {
				scope.close();
			}
		}
		return decided.handle((decision, failure) -> {
			long nanos = elapsed(started);
			if (failure != null) {
				RuntimeException cause = unwrap(failure);
				failed(request.bucket(), trace, cause, nanos);
				return CompletableFuture.<Step>failedFuture(cause);
			}
			long wait = retryWait(request, decision, deadline);
			if (wait < 0) {
				return CompletableFuture.completedFuture(step(request, trace, decision, nanos, waited, askedAt));
			}
			CompletionStage<Void> delayed = this.waiter.delay(wait);
			if (trace != null) {
				Runnable waitEnds = trace.startWait(wait);
				delayed = delayed.whenComplete((done, ex) -> waitEnds.run());
			}
			return delayed.thenCompose((done) -> decideAsync(request, trace, deadline, true));
		}).thenCompose(Function.identity());
	}

	/**
	 * Returns how long to wait before asking again, or {@code -1} when the decision is
	 * final: allowed, rejected in shadow mode (it proceeds), or a rejection the request's
	 * policy does not wait out.
	 */
	private long retryWait(PermitRequest request, Decision decision, long deadline) {
		if (decision.allowed() || request.bucket().mode() == LimitMode.SHADOW
				|| !request.waitPolicy().waitsForPermits()) {
			return -1;
		}
		return request.waitPolicy().retryWait(decision, deadline - this.clock.nowMicros());
	}

	/**
	 * Returns when the store is asked, when the request has a deadline to measure it
	 * against; {@link #UNREAD} otherwise, which saves most requests a clock read.
	 */
	private long askedAt(long deadline) {
		return (deadline != WaitPolicy.NO_DEADLINE) ? this.clock.nowMicros() : UNREAD;
	}

	/**
	 * Starts timing a store call, for the observers' latency; without observers nobody
	 * reads the time, and it is not taken.
	 */
	private long startTimer() {
		return (this.observers.length > 0) ? System.nanoTime() : 0;
	}

	private long elapsed(long started) {
		return (this.observers.length > 0) ? System.nanoTime() - started : -1;
	}

	/**
	 * Makes a final decision a result, tells the observers, and notes when a leaky bucket
	 * delay lets the call proceed: it counts from when the store was asked, or, when the
	 * clock was not read then, from now, which errs late by the store's latency, never
	 * early.
	 */
	private Step step(PermitRequest request, @Nullable DecisionTrace trace, Decision decision, long nanos,
			boolean waited, long askedAtMicros) {
		RateLimitResult result = result(request, trace, decision, nanos, waited);
		long delay = decision.delayMicros();
		if (delay <= 0) {
			return new Step(result, NO_DELAY);
		}
		return new Step(result, ((askedAtMicros != UNREAD) ? askedAtMicros : this.clock.nowMicros()) + delay);
	}

	/**
	 * Starts following a request, when there is a tracer; one that throws is logged and
	 * the request goes unfollowed.
	 */
	private @Nullable DecisionTrace trace(PermitRequest request) {
		DecisionTracer tracer = this.tracer;
		if (tracer == null) {
			return null;
		}
		try {
			return tracer.start(request);
		}
		catch (RuntimeException ex) {
			logger.log(Level.WARNING, "Rate limit tracer " + tracer.getClass().getName() + " failed", ex);
			return null;
		}
	}

	/**
	 * Makes a final decision a result and tells the observers, then ends the trace.
	 */
	private RateLimitResult result(PermitRequest request, @Nullable DecisionTrace trace, Decision decision, long nanos,
			boolean waited) {
		Outcome outcome;
		if (decision.allowed()) {
			outcome = waited ? Outcome.WAITED : Outcome.ALLOWED;
		}
		else {
			outcome = (request.bucket().mode() == LimitMode.SHADOW) ? Outcome.SHADOW_REJECTED : Outcome.REJECTED;
		}
		RateLimitResult result = new RateLimitResult(request, decision, outcome, nanos);
		for (RateLimitObserver observer : this.observers) {
			try {
				observer.onDecision(result);
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Rate limit observer " + observer.getClass().getName() + " failed", ex);
			}
		}
		if (trace != null) {
			trace.stop(result);
		}
		return result;
	}

	private void failed(Bucket bucket, @Nullable DecisionTrace trace, RuntimeException failure, long nanos) {
		for (RateLimitObserver observer : this.observers) {
			try {
				observer.onError(bucket, failure, nanos);
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Rate limit observer " + observer.getClass().getName() + " failed", ex);
			}
		}
		if (trace != null) {
			trace.error(failure);
		}
	}

	/**
	 * Sleeps until the leaky bucket slots of a granted call arrive. An interrupt does not
	 * cut the wait short; it is restored for the caller to see.
	 */
	private void awaitDelay(long proceedAtMicros) {
		if (proceedAtMicros == NO_DELAY) {
			return;
		}
		boolean interrupted = false;
		long remaining = proceedAtMicros - this.clock.nowMicros();
		while (remaining > 0) {
			try {
				this.waiter.sleep(remaining);
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
			remaining = proceedAtMicros - this.clock.nowMicros();
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	private CompletionStage<Void> awaitDelayAsync(long proceedAtMicros) {
		long remaining = (proceedAtMicros != NO_DELAY) ? proceedAtMicros - this.clock.nowMicros() : 0;
		return (remaining > 0) ? this.waiter.delay(remaining) : CompletableFuture.completedFuture(null);
	}

	private static RuntimeException unwrap(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof RuntimeException runtime) ? runtime : new CompletionException(cause);
	}

	/**
	 * What {@link #acquireHolding} took.
	 *
	 * @param permit the concurrency permit: held when {@code acquisition} is granted;
	 * refused, with nothing decided, when no permit was free
	 * @param acquisition the requests' acquisition, or {@code null} when no permit was
	 * free
	 */
	public record Holding(ConcurrencyPermit permit, @Nullable Acquisition acquisition) {

	}

	/**
	 * What a request limited by both took, and when its leaky bucket delay ends.
	 */
	private record HeldStep(Holding holding, long proceedAtMicros) {
	}

	/**
	 * A request's final result, and when its leaky bucket delay ends.
	 */
	private record Step(RateLimitResult result, long proceedAtMicros) {
	}

	/**
	 * Builds an {@link Acquirer}.
	 */
	public static final class Builder {

		private final RateLimitStore store;

		private Waiter waiter = Waiter.system();

		private final List<RateLimitObserver> observers = new ArrayList<>();

		private @Nullable DecisionTracer tracer;

		private Builder(RateLimitStore store) {
			this.store = Objects.requireNonNull(store, "'store' must not be null");
		}

		/**
		 * Sets the clock and the waits; {@link Waiter#system()} otherwise.
		 * @param waiter the waiter
		 * @return this builder
		 */
		public Builder waiter(Waiter waiter) {
			this.waiter = Objects.requireNonNull(waiter, "'waiter' must not be null");
			return this;
		}

		/**
		 * Adds an observer, told of every result after those added before it.
		 * @param observer the observer
		 * @return this builder
		 */
		public Builder observer(RateLimitObserver observer) {
			this.observers.add(Objects.requireNonNull(observer, "'observer' must not be null"));
			return this;
		}

		/**
		 * Adds observers, in order.
		 * @param observers the observers
		 * @return this builder
		 */
		public Builder observers(Iterable<? extends RateLimitObserver> observers) {
			observers.forEach(this::observer);
			return this;
		}

		/**
		 * Sets the tracer that follows each request's decision; none otherwise.
		 * @param tracer the tracer, or {@code null} for none
		 * @return this builder
		 */
		public Builder tracer(@Nullable DecisionTracer tracer) {
			this.tracer = tracer;
			return this;
		}

		/**
		 * Builds the acquirer.
		 * @return the acquirer
		 */
		public Acquirer build() {
			return new Acquirer(this);
		}

	}

}
