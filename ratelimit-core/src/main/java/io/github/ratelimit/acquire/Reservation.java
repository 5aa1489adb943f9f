package io.github.ratelimit.acquire;

import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.Decision;

/**
 * Permits taken for a call whose real cost is known only when it ends (the tokens an LLM
 * completion used): an estimate is taken up front, and {@link #settle} says what the call
 * used, once. Less gives the difference back; more takes the excess even past the limit,
 * putting the key into debt until it is paid off at the limit's rate. A reservation never
 * settled (the instance crashed, the caller forgot) stays charged at the estimate: never
 * lost, never charged twice.
 *
 * <pre>{@code
 * Reservation reservation = limiter.reserve(apiKey, request.maxTokens());
 * if (!reservation.proceeds()) {
 *     return tooManyRequests(reservation.result().decision().retryAfter());
 * }
 * try {
 *     Completion completion = model.complete(request);
 *     reservation.settle(completion.usage().totalTokens());
 *     return completion;
 * }
 * finally {
 *     reservation.cancel();   // gives the estimate back if nothing was settled
 * }
 * }</pre>
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class Reservation {

	private final Acquirer acquirer;

	private final RateLimitResult result;

	private final AtomicBoolean settled = new AtomicBoolean();

	/**
	 * Creates a reservation from the result of taking its estimate.
	 * @param acquirer the acquirer that took it, which settles it
	 * @param result the result of taking the estimate ({@link PermitRequest#cost()})
	 */
	public Reservation(Acquirer acquirer, RateLimitResult result) {
		this.acquirer = acquirer;
		this.result = result;
	}

	/**
	 * Returns whether the call may go on: the estimate was taken, or shadow mode let the
	 * call through.
	 * @return {@code true} when the call may proceed
	 */
	public boolean proceeds() {
		return this.result.proceeds();
	}

	/**
	 * Returns the result of taking the estimate: its decision holds the remaining
	 * permits, and when rejected the retry-after.
	 * @return the result
	 */
	public RateLimitResult result() {
		return this.result;
	}

	/**
	 * Returns the decision that took (or refused) the estimate.
	 * @return the decision
	 */
	public Decision decision() {
		return this.result.decision();
	}

	/**
	 * Returns the permits reserved up front.
	 * @return the estimate
	 */
	public long estimate() {
		return this.result.request().cost();
	}

	/**
	 * Settles what the call used, once: a later {@code settle} or {@link #cancel()} does
	 * nothing. A reservation that was rejected settles nothing. When the store cannot be
	 * reached, the reservation stays charged at its estimate and the failure is thrown.
	 * @param actual the permits the call used, zero or more
	 * @return whether this call settled the reservation (it was not settled before)
	 * @throws IllegalArgumentException when {@code actual} is negative (the reservation
	 * stays open)
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer
	 */
	public boolean settle(long actual) {
		if (actual < 0) {
			throw new IllegalArgumentException("a settlement must not be negative but was " + actual + " (bucket '"
					+ this.result.bucket().name() + "')");
		}
		if (!this.settled.compareAndSet(false, true)) {
			return false;
		}
		this.acquirer.settle(this.result, actual);
		return true;
	}

	/**
	 * Gives the whole estimate back, unless the reservation was settled already: for a
	 * call that did not run, or one that should not count.
	 * @return whether this call settled the reservation
	 */
	public boolean cancel() {
		return settle(0);
	}

	/**
	 * Returns whether the reservation was settled or cancelled.
	 * @return {@code true} once settled
	 */
	public boolean isSettled() {
		return this.settled.get();
	}

	@Override
	public String toString() {
		return "Reservation of " + estimate() + " permit(s) of bucket '" + this.result.bucket().name() + "' for key '"
				+ this.result.key() + "'" + (isSettled() ? ", settled" : "");
	}

}
