package io.github.ratelimit;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The answer to one rate limit request. Times are kept in microseconds, the resolution of
 * every store; the {@link Duration} accessors convert.
 * <p>
 * A request checked against several limits at once gets one combined decision whose
 * {@link #limits()} holds the decision of each limit, in the order the limits were given.
 * The combined decision is allowed only when every limit allows; its {@code limit} and
 * {@code remaining} come from the limit closest to exhaustion (or, when rejected, from
 * the limit that needs the longest wait), its {@code retryAfter}, {@code resetAfter} and
 * {@code delay} are the longest of all.
 * <p>
 * {@link #origin()} tells who made the decision: the store asked, or the fallback that
 * answered while that store failed. A refund goes to the same place (see
 * {@link io.github.ratelimit.store.RateLimitStore#refund(String, String, List, long, Decision)}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class Decision {

	/**
	 * {@link #retryAfterMicros()} of a request that no wait can help: its cost is larger
	 * than the capacity of a limit.
	 */
	public static final long NEVER = Long.MAX_VALUE;

	private final boolean allowed;

	private final long limit;

	private final long remaining;

	private final long resetAfterMicros;

	private final long retryAfterMicros;

	private final long delayMicros;

	private final @Nullable LimitSpec spec;

	/**
	 * The per-limit decisions of a combined decision; {@code null} for a single limit.
	 */
	private final @Nullable List<Decision> limits;

	private final Origin origin;

	private final boolean penaltyStarted;

	private Decision(boolean allowed, long limit, long remaining, long resetAfterMicros, long retryAfterMicros,
			long delayMicros, @Nullable LimitSpec spec, @Nullable List<Decision> limits) {
		this(allowed, limit, remaining, resetAfterMicros, retryAfterMicros, delayMicros, spec, limits, Origin.STORE,
				false);
	}

	private Decision(boolean allowed, long limit, long remaining, long resetAfterMicros, long retryAfterMicros,
			long delayMicros, @Nullable LimitSpec spec, @Nullable List<Decision> limits, Origin origin,
			boolean penaltyStarted) {
		this.allowed = allowed;
		this.limit = limit;
		this.remaining = Math.max(0, remaining);
		this.resetAfterMicros = Math.max(0, resetAfterMicros);
		this.retryAfterMicros = allowed ? 0 : Math.max(0, retryAfterMicros);
		this.delayMicros = allowed ? Math.max(0, delayMicros) : 0;
		this.spec = spec;
		this.limits = limits;
		this.origin = origin;
		this.penaltyStarted = penaltyStarted && !allowed;
	}

	/**
	 * Creates an allowing decision for one limit.
	 * @param spec the limit
	 * @param remaining permits left after this request
	 * @param resetAfterMicros time until the limit is fully restored with no more traffic
	 * @param delayMicros time the caller must wait before proceeding (leaky bucket)
	 * @return the decision
	 */
	public static Decision allowed(LimitSpec spec, long remaining, long resetAfterMicros, long delayMicros) {
		return new Decision(true, spec.limit(), remaining, resetAfterMicros, 0, delayMicros, spec, null);
	}

	/**
	 * Creates a rejecting decision for one limit.
	 * @param spec the limit
	 * @param remaining permits left (this request consumed none)
	 * @param resetAfterMicros time until the limit is fully restored with no more traffic
	 * @param retryAfterMicros the shortest wait after which the same request would be
	 * allowed, or {@link #NEVER}
	 * @return the decision
	 */
	public static Decision rejected(LimitSpec spec, long remaining, long resetAfterMicros, long retryAfterMicros) {
		return new Decision(false, spec.limit(), remaining, resetAfterMicros, retryAfterMicros, 0, spec, null);
	}

	/**
	 * Creates an allowing decision that no rate limit made (a concurrency limit's): it
	 * has no {@link #spec()} and no window.
	 * @param limit the permits of the limit
	 * @param remaining the permits left after this request
	 * @return the decision
	 */
	public static Decision allowed(long limit, long remaining) {
		return new Decision(true, limit, remaining, 0, 0, 0, null, null);
	}

	/**
	 * Creates a rejection that no rate limit made (a concurrency limit's): it has no
	 * {@link #spec()} and no window.
	 * @param limit the permits of the limit
	 * @param retryAfterMicros an estimate of when the same request would be allowed
	 * @return the decision
	 */
	public static Decision rejected(long limit, long retryAfterMicros) {
		return new Decision(false, limit, 0, retryAfterMicros, retryAfterMicros, 0, null, null);
	}

	/**
	 * Combines the decisions of several limits checked in one call.
	 * @param decisions one decision per limit, at least one
	 * @return the single decision when there is one, the combination otherwise
	 */
	public static Decision combine(List<Decision> decisions) {
		if (decisions.size() == 1) {
			return decisions.get(0);
		}
		if (decisions.isEmpty()) {
			throw new IllegalArgumentException("decisions must not be empty");
		}
		boolean allowed = true;
		boolean penaltyStarted = false;
		for (Decision decision : decisions) {
			allowed &= decision.allowed;
			penaltyStarted |= decision.penaltyStarted;
		}
		Decision binding = null;
		long resetAfter = 0;
		long delay = 0;
		for (Decision decision : decisions) {
			resetAfter = Math.max(resetAfter, decision.resetAfterMicros);
			delay = Math.max(delay, decision.delayMicros);
			if (allowed) {
				if (binding == null || decision.remaining < binding.remaining) {
					binding = decision;
				}
			}
			else if (!decision.allowed && (binding == null || decision.retryAfterMicros > binding.retryAfterMicros)) {
				binding = decision;
			}
		}
		// Never null: an allowed combination has limits, a rejected one a rejecting
		// limit.
		Objects.requireNonNull(binding);
		return new Decision(allowed, binding.limit, binding.remaining, resetAfter, binding.retryAfterMicros, delay,
				binding.spec, List.copyOf(decisions), Origin.STORE, penaltyStarted);
	}

	/**
	 * Returns whether the request may proceed (after {@link #delay()}).
	 * @return {@code true} when allowed
	 */
	public boolean allowed() {
		return this.allowed;
	}

	/**
	 * Returns the permits per window of the binding limit.
	 * @return the limit
	 */
	public long limit() {
		return this.limit;
	}

	/**
	 * Returns the permits left in the binding limit, never negative.
	 * @return the remaining permits
	 */
	public long remaining() {
		return this.remaining;
	}

	/**
	 * Returns the time until every limit is fully restored if no more requests arrive.
	 * @return the reset time in microseconds
	 */
	public long resetAfterMicros() {
		return this.resetAfterMicros;
	}

	/**
	 * Returns the time until every limit is fully restored if no more requests arrive.
	 * @return the reset time
	 */
	public Duration resetAfter() {
		return Duration.of(this.resetAfterMicros, ChronoUnit.MICROS);
	}

	/**
	 * Returns zero when allowed; when rejected, the shortest wait after which the same
	 * request would be allowed if no other requests arrive, or {@link #NEVER}.
	 * @return the retry time in microseconds
	 */
	public long retryAfterMicros() {
		return this.retryAfterMicros;
	}

	/**
	 * Returns zero when allowed; when rejected, the shortest wait after which the same
	 * request would be allowed. A request no wait can help (cost above capacity) returns
	 * {@link ChronoUnit#FOREVER}'s duration.
	 * @return the retry time
	 */
	public Duration retryAfter() {
		return (this.retryAfterMicros == NEVER) ? ChronoUnit.FOREVER.getDuration()
				: Duration.of(this.retryAfterMicros, ChronoUnit.MICROS);
	}

	/**
	 * Returns whether waiting can ever turn this rejection into an allowance.
	 * @return {@code false} when the cost exceeds a limit's capacity
	 */
	public boolean retryable() {
		return this.allowed || this.retryAfterMicros != NEVER;
	}

	/**
	 * Returns how long an allowed caller must wait before proceeding (leaky bucket
	 * shaping); zero for other algorithms and for rejections.
	 * @return the delay in microseconds
	 */
	public long delayMicros() {
		return this.delayMicros;
	}

	/**
	 * Returns how long an allowed caller must wait before proceeding (leaky bucket
	 * shaping).
	 * @return the delay
	 */
	public Duration delay() {
		return Duration.of(this.delayMicros, ChronoUnit.MICROS);
	}

	/**
	 * Returns the binding limit, or {@code null} for a decision not made by a store.
	 * @return the limit spec
	 */
	public @Nullable LimitSpec spec() {
		return this.spec;
	}

	/**
	 * Returns whether a concurrency limit made this decision
	 * ({@link #allowed(long, long)}, {@link #rejected(long, long)}): it counts calls in
	 * flight, with no spec and no window.
	 * @return {@code true} for a concurrency limit's decision
	 */
	public boolean isConcurrency() {
		return this.spec == null && this.limits == null;
	}

	/**
	 * Returns the decision of each limit of the call, in the order the limits were given;
	 * a single-limit decision returns a list of itself.
	 * @return the per-limit decisions
	 */
	public List<Decision> limits() {
		// Built on demand: most decisions are of one limit and nobody asks.
		return (this.limits != null) ? this.limits : Collections.singletonList(this);
	}

	/**
	 * Returns who made this decision, and so where its permits were taken.
	 * @return {@link Origin#STORE} unless a failure-mode layer says otherwise
	 */
	public Origin origin() {
		return this.origin;
	}

	/**
	 * Returns this decision marked as made by {@code origin}; the per-limit decisions of
	 * a combined decision are marked too.
	 * @param origin who made the decision
	 * @return this decision when it already has that origin, else a copy
	 */
	public Decision withOrigin(Origin origin) {
		Objects.requireNonNull(origin, "'origin' must not be null");
		if (origin == this.origin) {
			return this;
		}
		List<Decision> marked = null;
		if (this.limits != null) {
			marked = new ArrayList<>(this.limits.size());
			for (Decision decision : this.limits) {
				marked.add(decision.withOrigin(origin));
			}
			marked = List.copyOf(marked);
		}
		return new Decision(this.allowed, this.limit, this.remaining, this.resetAfterMicros, this.retryAfterMicros,
				this.delayMicros, this.spec, marked, origin, this.penaltyStarted);
	}

	/**
	 * Returns whether this rejection blocked its key for a limit's
	 * {@link LimitSpec#penalty() penalty}: true for the one rejection that starts a
	 * block, false for the rejections answered while it lasts (and for a decision
	 * {@link #repeated() repeated} to another request). A combined decision returns
	 * whether any of its limits started one.
	 * @return whether a penalty started with this decision
	 */
	public boolean penaltyStarted() {
		return this.penaltyStarted;
	}

	/**
	 * Returns this rejection marked as the one that blocked its key for its limit's
	 * penalty; for stores.
	 * @return a copy marked as starting a penalty
	 * @throws IllegalStateException when this decision allows
	 */
	public Decision startingPenalty() {
		if (this.allowed) {
			throw new IllegalStateException("An allowed decision starts no penalty: " + this);
		}
		return new Decision(this.allowed, this.limit, this.remaining, this.resetAfterMicros, this.retryAfterMicros,
				this.delayMicros, this.spec, this.limits, this.origin, true);
	}

	/**
	 * Returns this decision as given again, to another request that asked alike (a
	 * batch's run of identical rejections, a cached rejection): it took the same permits,
	 * but started no penalty.
	 * @return this decision, unmarked when it started a penalty
	 */
	public Decision repeated() {
		if (!this.penaltyStarted) {
			return this;
		}
		List<Decision> unmarked = null;
		if (this.limits != null) {
			unmarked = new ArrayList<>(this.limits.size());
			for (Decision decision : this.limits) {
				unmarked.add(decision.repeated());
			}
			unmarked = List.copyOf(unmarked);
		}
		return new Decision(this.allowed, this.limit, this.remaining, this.resetAfterMicros, this.retryAfterMicros,
				this.delayMicros, this.spec, unmarked, this.origin, false);
	}

	/**
	 * Returns this decision as it stands {@code micros} later with nothing else
	 * happening: its retry-after and reset-after shortened by that time (never below
	 * zero; {@link #NEVER} stays {@code NEVER}), for every limit of a combined decision
	 * too. An aged decision is {@link #repeated()}: it starts no penalty.
	 * @param micros the time passed, at least 0
	 * @return this decision when no time passed, else a copy
	 */
	public Decision elapsed(long micros) {
		if (micros < 0) {
			throw new IllegalArgumentException("micros must not be negative but was " + micros);
		}
		if (micros == 0) {
			return repeated();
		}
		List<Decision> aged = null;
		if (this.limits != null) {
			aged = new ArrayList<>(this.limits.size());
			for (Decision decision : this.limits) {
				aged.add(decision.elapsed(micros));
			}
			aged = List.copyOf(aged);
		}
		long retryAfter = (this.retryAfterMicros == NEVER) ? NEVER : this.retryAfterMicros - micros;
		return new Decision(this.allowed, this.limit, this.remaining, this.resetAfterMicros - micros, retryAfter,
				this.delayMicros, this.spec, aged, this.origin, false);
	}

	@Override
	public String toString() {
		return "Decision{allowed=" + this.allowed + ", limit=" + this.limit + ", remaining=" + this.remaining
				+ ", resetAfter=" + Durations.readableMicros(this.resetAfterMicros) + ", retryAfter="
				+ ((this.retryAfterMicros == NEVER) ? "never" : Durations.readableMicros(this.retryAfterMicros))
				+ ", delay=" + Durations.readableMicros(this.delayMicros)
				+ ((this.origin != Origin.STORE) ? ", origin=" + this.origin : "")
				+ (this.penaltyStarted ? ", penaltyStarted" : "")
				+ ((this.limits != null) ? ", limits=" + this.limits : "") + "}";
	}

	/**
	 * Who made a decision.
	 */
	public enum Origin {

		/** The store that was asked: its state holds the permits taken. */
		STORE,

		/**
		 * A stand-in while the store failed (an application's per-instance fallback
		 * store, or a failure mode that allows without asking): the store asked knows
		 * nothing of this decision, so its permits are not in that store's state.
		 */
		FALLBACK

	}

}
