package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;

/**
 * The concurrency permits one request holds under the rules (or the route) that limit it,
 * from before its handler runs until its response is complete. Taken in rule order
 * without waiting; when one is refused, those taken before it are released at once, so a
 * rejected request holds nothing. {@link #release()} gives every permit back exactly
 * once, however many of completion, error, timeout and cancellation report the end.
 * <p>
 * Taking a permit is a store call: a reactive caller runs {@link #acquire} off the event
 * loop. A request limited by the rate and the concurrency of one bucket takes its permit
 * with its rate limits' decision, in one store call
 * ({@link #acquire(Claim, PermitRequest, Acquirer)}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InFlightPermits {

	/** Holds nothing: for a request that no concurrency limit applies to. */
	public static final InFlightPermits NONE = new InFlightPermits(List.of(), null, null);

	private final List<ConcurrencyPermit> held;

	private final @Nullable ConcurrencyPermit rejection;

	private final @Nullable Acquisition acquisition;

	private final AtomicBoolean released = new AtomicBoolean();

	private InFlightPermits(List<ConcurrencyPermit> held, @Nullable ConcurrencyPermit rejection,
			@Nullable Acquisition acquisition) {
		this.held = held;
		this.rejection = rejection;
		this.acquisition = acquisition;
	}

	/**
	 * Takes a permit of each claim, in order, until one is refused.
	 * @param claims the concurrency limits that apply, each with the request's key
	 * @return the permits held, or the refusal with nothing held
	 * @throws io.github.ratelimit.store.StoreUnavailableException when the store cannot
	 * answer and {@code ratelimit.failure-mode} is {@code closed}; permits taken before
	 * are released first
	 */
	public static InFlightPermits acquire(List<Claim> claims) {
		if (claims.isEmpty()) {
			return NONE;
		}
		List<ConcurrencyPermit> held = new ArrayList<>(claims.size());
		try {
			for (Claim claim : claims) {
				ConcurrencyPermit permit = claim.limiter().tryAcquire(claim.key());
				if (!permit.acquired()) {
					held.forEach(ConcurrencyPermit::release);
					return new InFlightPermits(List.of(), permit, null);
				}
				held.add(permit);
			}
		}
		catch (RuntimeException ex) {
			held.forEach(ConcurrencyPermit::release);
			throw ex;
		}
		return new InFlightPermits(List.copyOf(held), null, null);
	}

	/**
	 * Takes the permit of a request's concurrency limit and decides its rate limits of
	 * the same bucket and key, in one store call where the store can
	 * ({@link Acquirer#acquireHolding}).
	 * @param claim the concurrency limit, with the request's key
	 * @param request the rate limits' request, of the same bucket and key
	 * @param acquirer decides the rate limits
	 * @return the permit held, or the refusal with nothing held and nothing decided, and
	 * the {@link #acquisition()} when a permit was free; no permit is held when the rate
	 * limits rejected the request
	 * @throws io.github.ratelimit.store.StoreUnavailableException when the store cannot
	 * answer and {@code ratelimit.failure-mode} is {@code closed}
	 */
	public static InFlightPermits acquire(Claim claim, PermitRequest request, Acquirer acquirer) {
		return of(acquirer.acquireHolding(request, claim.limiter()));
	}

	/**
	 * Returns what {@link Acquirer#acquireHolding} took, as the permits of a request.
	 * @param holding the permit and, when one was free, the acquisition
	 * @return the permits
	 */
	public static InFlightPermits of(Acquirer.Holding holding) {
		ConcurrencyPermit permit = holding.permit();
		Acquisition acquisition = holding.acquisition();
		if (acquisition == null) {
			return new InFlightPermits(List.of(), permit, null);
		}
		return new InFlightPermits(permit.acquired() ? List.of(permit) : List.of(), null, acquisition);
	}

	/**
	 * Returns the rate limits' acquisition, when it was made with the permit in one call.
	 * @return the acquisition, or {@code null} when the rate limits are still to be
	 * decided (or a concurrency limit refused the request)
	 */
	public @Nullable Acquisition acquisition() {
		return this.acquisition;
	}

	/**
	 * Returns whether every permit was taken.
	 * @return {@code false} when a concurrency limit refused the request
	 */
	public boolean granted() {
		return this.rejection == null;
	}

	/**
	 * Returns the refusal.
	 * @return the refused permit, which holds nothing, or {@code null} when granted
	 */
	public @Nullable ConcurrencyPermit rejection() {
		return this.rejection;
	}

	/**
	 * Returns the permits held, for the limit headers.
	 * @return the permits, in rule order; empty when refused
	 */
	public List<ConcurrencyPermit> held() {
		return this.held;
	}

	/**
	 * Releases every permit held, the first time it is called; later calls do nothing.
	 */
	public void release() {
		if (!this.held.isEmpty() && this.released.compareAndSet(false, true)) {
			this.held.forEach(ConcurrencyPermit::release);
		}
	}

	/**
	 * One concurrency limit that applies to a request, with the request's key.
	 *
	 * @param limiter the limit
	 * @param key the key, as the rule evaluated it
	 */
	public record Claim(ConcurrencyLimiter limiter, String key) {

		/**
		 * Checks the fields.
		 * @param limiter the limit
		 * @param key the key
		 */
		public Claim {
			Objects.requireNonNull(limiter, "'limiter' must not be null");
			Objects.requireNonNull(key, "'key' must not be null");
		}

	}

}
