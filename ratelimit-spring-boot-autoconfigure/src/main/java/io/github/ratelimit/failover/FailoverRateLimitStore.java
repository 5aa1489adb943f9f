package io.github.ratelimit.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreArguments;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.spring.FailureMode;
import io.github.ratelimit.spring.StoreStatus;
import io.github.ratelimit.spring.StoreStatusSource;

/**
 * Puts a circuit breaker in front of a store (Redis) and applies the failure mode while
 * it fails: {@code fallback} decides with a per-instance in-memory store, {@code open}
 * allows, {@code closed} throws {@link StoreUnavailableException}. While the breaker is
 * open no request pays the store's timeout; after {@code waitInOpenState} a few probe
 * requests go to the store again, and it takes over as soon as they succeed.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class FailoverRateLimitStore implements RateLimitStore, StoreStatusSource {

	private static final Log logger = LogFactory.getLog(FailoverRateLimitStore.class);

	private final RateLimitStore primary;

	private final RateLimitStore fallback;

	private final FailureMode mode;

	private final CircuitBreaker breaker;

	private final ThrottledFailureLog failures = new ThrottledFailureLog(logger, 10, TimeUnit.SECONDS);

	private final AtomicLong failureCount = new AtomicLong();

	/**
	 * Creates the store with the default circuit breaker (see
	 * {@link #defaultCircuitBreaker(String)}).
	 * @param primary the store to protect
	 * @param fallback the store used in {@code fallback} mode while the primary fails
	 * @param mode the failure mode
	 */
	public FailoverRateLimitStore(RateLimitStore primary, RateLimitStore fallback, FailureMode mode) {
		this(primary, fallback, mode, defaultCircuitBreaker(primary.name()));
	}

	/**
	 * Creates the store.
	 * @param primary the store to protect
	 * @param fallback the store used in {@code fallback} mode while the primary fails
	 * @param mode the failure mode
	 * @param breaker the circuit breaker; it should record only
	 * {@link RateLimitStoreException}s
	 */
	public FailoverRateLimitStore(RateLimitStore primary, RateLimitStore fallback, FailureMode mode,
			CircuitBreaker breaker) {
		this.primary = primary;
		this.fallback = fallback;
		this.mode = mode;
		this.breaker = breaker;
		warmUp(fallback);
		this.breaker.getEventPublisher()
			.onStateTransition((event) -> logger.warn("Rate limit store '" + primary.name() + "' circuit breaker: "
					+ event.getStateTransition().getFromState() + " -> " + event.getStateTransition().getToState()
					+ (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN
							? " (requests use failure-mode " + mode.name().toLowerCase(Locale.ROOT) + ")" : "")));
	}

	/**
	 * Returns the circuit breaker used unless one is given: opens when half of the last
	 * 10 calls (at least 5) failed, stays open 1 second, then lets 3 probe calls through.
	 * @param name the breaker's name
	 * @return the breaker
	 */
	public static CircuitBreaker defaultCircuitBreaker(String name) {
		CircuitBreakerConfig config = CircuitBreakerConfig.custom()
			.slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.slidingWindowSize(10)
			.minimumNumberOfCalls(5)
			.failureRateThreshold(50)
			.waitDurationInOpenState(Duration.ofSeconds(1))
			.permittedNumberOfCallsInHalfOpenState(3)
			.recordExceptions(RateLimitStoreException.class)
			.build();
		return CircuitBreaker.of("ratelimit-" + name, config);
	}

	/**
	 * Returns whether decisions currently bypass the primary store.
	 * @return {@code true} while the circuit breaker is open or half-open
	 */
	public boolean isDegraded() {
		CircuitBreaker.State state = this.breaker.getState();
		// Half-open counts: only the probe calls reach the primary, the rest use the
		// failure mode.
		return state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN
				|| state == CircuitBreaker.State.HALF_OPEN;
	}

	/**
	 * Returns the circuit breaker, e.g. for metrics.
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

	@Override
	public StoreStatus status() {
		return new StoreStatus(this.primary.name(), this.mode, isDegraded(), this.failureCount.get());
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
		StoreArguments.check(bucket, key, limits, cost);
		if (this.breaker.tryAcquirePermission()) {
			long started = System.nanoTime();
			try {
				Decision decision = this.primary.decide(bucket, key, limits, cost, maxDelayMicros);
				this.breaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
				return decision;
			}
			catch (RateLimitStoreException ex) {
				recordFailure(started, ex);
				return degraded(bucket, key, limits, cost, maxDelayMicros, ex);
			}
			catch (RuntimeException ex) {
				this.breaker.onError(System.nanoTime() - started, TimeUnit.NANOSECONDS, ex);
				throw ex;
			}
		}
		return degraded(bucket, key, limits, cost, maxDelayMicros, null);
	}

	@Override
	public CompletionStage<Decision> decideAsync(String bucket, String key, List<LimitSpec> limits, long cost,
			long maxDelayMicros) {
		try {
			StoreArguments.check(bucket, key, limits, cost);
		}
		catch (IllegalArgumentException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (!this.breaker.tryAcquirePermission()) {
			return degradedAsync(bucket, key, limits, cost, maxDelayMicros, null);
		}
		long started = System.nanoTime();
		CompletableFuture<Decision> result = new CompletableFuture<>();
		this.primary.decideAsync(bucket, key, limits, cost, maxDelayMicros).whenComplete((decision, ex) -> {
			if (ex == null) {
				this.breaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
				result.complete(decision);
				return;
			}
			Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
			if (cause instanceof RateLimitStoreException storeFailure) {
				recordFailure(started, storeFailure);
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
				this.breaker.onError(System.nanoTime() - started, TimeUnit.NANOSECONDS, cause);
				result.completeExceptionally(cause);
			}
		});
		return result;
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

	@Override
	public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		if (this.breaker.tryAcquirePermission()) {
			long started = System.nanoTime();
			try {
				this.primary.refund(bucket, key, limits, cost);
				this.breaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
				return;
			}
			catch (RateLimitStoreException ex) {
				recordFailure(started, ex);
			}
		}
		if (this.mode == FailureMode.FALLBACK) {
			this.fallback.refund(bucket, key, limits, cost);
		}
	}

	@Override
	public Decision peek(String bucket, String key, List<LimitSpec> limits) {
		if (this.breaker.tryAcquirePermission()) {
			long started = System.nanoTime();
			try {
				Decision decision = this.primary.peek(bucket, key, limits);
				this.breaker.onSuccess(System.nanoTime() - started, TimeUnit.NANOSECONDS);
				return decision;
			}
			catch (RateLimitStoreException ex) {
				recordFailure(started, ex);
			}
		}
		return this.fallback.peek(bucket, key, limits);
	}

	@Override
	public void reset(String bucket, String key, List<LimitSpec> limits) {
		this.fallback.reset(bucket, key, limits);
		this.primary.reset(bucket, key, limits);
	}

	@Override
	public String name() {
		return this.primary.name();
	}

	@Override
	public void close() {
		try {
			this.primary.close();
		}
		finally {
			this.fallback.close();
		}
	}

	/**
	 * Runs every algorithm of the fallback once, so that the first request of an outage,
	 * which has already waited the primary's timeout, does not also pay for class
	 * loading.
	 */
	private static void warmUp(RateLimitStore fallback) {
		for (Algorithm algorithm : Algorithm.values()) {
			List<LimitSpec> limits = List.of(LimitSpec.of(1, "1s", algorithm));
			fallback.peek("ratelimit-warm-up", "", limits);
		}
	}

	private void recordFailure(long started, RateLimitStoreException ex) {
		this.breaker.onError(System.nanoTime() - started, TimeUnit.NANOSECONDS, ex);
		this.failureCount.incrementAndGet();
		this.failures.failure("Rate limit store '" + this.primary.name() + "' failed; using failure-mode "
				+ this.mode.name().toLowerCase(Locale.ROOT), ex);
	}

	private Decision degraded(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros,
			RateLimitStoreException cause) {
		switch (this.mode) {
			case FALLBACK:
				return this.fallback.decide(bucket, key, limits, cost, maxDelayMicros);
			case OPEN:
				List<Decision> allowed = new ArrayList<>(limits.size());
				for (LimitSpec spec : limits) {
					allowed.add(Decision.allowed(spec, spec.limit(), 0, 0));
				}
				return Decision.combine(allowed);
			default:
				throw new StoreUnavailableException("Rate limit store '" + this.primary.name()
						+ "' is unavailable and ratelimit.failure-mode is closed", cause);
		}
	}

}
