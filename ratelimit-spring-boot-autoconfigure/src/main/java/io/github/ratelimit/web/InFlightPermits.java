package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

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
 * loop.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InFlightPermits {

	/** Holds nothing: for a request that no concurrency limit applies to. */
	public static final InFlightPermits NONE = new InFlightPermits(List.of(), null);

	private final List<ConcurrencyPermit> held;

	private final @Nullable ConcurrencyPermit rejection;

	private final AtomicBoolean released = new AtomicBoolean();

	private InFlightPermits(List<ConcurrencyPermit> held, @Nullable ConcurrencyPermit rejection) {
		this.held = held;
		this.rejection = rejection;
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
					return new InFlightPermits(List.of(), permit);
				}
				held.add(permit);
			}
		}
		catch (RuntimeException ex) {
			held.forEach(ConcurrencyPermit::release);
			throw ex;
		}
		return new InFlightPermits(List.copyOf(held), null);
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
