package io.github.ratelimit.acquire;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.RateLimitStore;

/**
 * How long a request may wait, and for what: only for a leaky bucket slot, or also for a
 * permit when a limit rejects it. Immutable.
 * <ul>
 * <li>{@link #REJECT}: a rejection is final; any leaky bucket delay is accepted (the
 * filter, {@code @RateLimited} without {@code maxWait}).</li>
 * <li>{@link #reject(Duration) reject(maxWait)}: a rejection is final; a leaky bucket
 * delay longer than {@code maxWait} is a rejection too ({@code onLimit = REJECT} with
 * {@code maxWait}).</li>
 * <li>{@link #waitUpTo(Duration) waitUpTo(maxWait)}: a rejected request waits for its
 * permit and asks again, for at most {@code maxWait} in all, leaky bucket delay included
 * ({@code onLimit = WAIT}, {@link io.github.ratelimit.RateLimiter#acquire}).</li>
 * </ul>
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class WaitPolicy {

	/** Reject at once; accept any leaky bucket delay. */
	public static final WaitPolicy REJECT = new WaitPolicy(false, -1);

	/**
	 * Shortest wait before asking again, so that a store answering a zero retry-after
	 * cannot make a waiting caller spin on it.
	 */
	static final long MIN_RETRY_WAIT_MICROS = 1000;

	/** A deadline that never passes. */
	static final long NO_DEADLINE = Long.MAX_VALUE;

	private final boolean waitForPermits;

	/** The longest wait in microseconds, or {@code -1} for none. */
	private final long maxWaitMicros;

	private WaitPolicy(boolean waitForPermits, long maxWaitMicros) {
		this.waitForPermits = waitForPermits;
		this.maxWaitMicros = maxWaitMicros;
	}

	/**
	 * Returns a policy that rejects at once and accepts a leaky bucket delay of at most
	 * {@code maxWait}.
	 * @param maxWait the longest delay, not negative
	 * @return the policy
	 */
	public static WaitPolicy reject(Duration maxWait) {
		return new WaitPolicy(false, toMicros(maxWait));
	}

	/**
	 * Returns a policy that waits for a permit, and then for a leaky bucket slot, for at
	 * most {@code maxWait} in all.
	 * @param maxWait the longest wait, not negative
	 * @return the policy
	 */
	public static WaitPolicy waitUpTo(Duration maxWait) {
		return new WaitPolicy(true, toMicros(maxWait));
	}

	/**
	 * Returns a policy from its two settings.
	 * @param waitForPermits whether a rejected request waits for its permit
	 * @param maxWait the longest wait, or {@code null} for none (then
	 * {@code waitForPermits} must be {@code false})
	 * @return the policy
	 * @throws IllegalArgumentException when waiting for permits has no bound
	 */
	public static WaitPolicy of(boolean waitForPermits, @Nullable Duration maxWait) {
		if (maxWait == null) {
			if (waitForPermits) {
				throw new IllegalArgumentException("waiting for a permit needs a maxWait");
			}
			return REJECT;
		}
		return waitForPermits ? waitUpTo(maxWait) : reject(maxWait);
	}

	/**
	 * Returns whether a rejected request waits for its permit.
	 * @return {@code true} for {@link #waitUpTo(Duration)}
	 */
	public boolean waitsForPermits() {
		return this.waitForPermits;
	}

	/**
	 * Returns the longest wait, if there is one.
	 * @return the longest wait
	 */
	public Optional<Duration> maxWait() {
		return (this.maxWaitMicros < 0) ? Optional.empty()
				: Optional.of(Duration.of(this.maxWaitMicros, ChronoUnit.MICROS));
	}

	/**
	 * Returns when waiting must end for a request that starts now. Reads the clock only
	 * when there is a bound: most requests have none, and skip the read.
	 * @param clock the clock
	 * @return the deadline, or {@link #NO_DEADLINE} without a bound
	 */
	long deadline(TimeSource clock) {
		if (this.maxWaitMicros < 0) {
			return NO_DEADLINE;
		}
		long nowMicros = clock.nowMicros();
		long deadline = nowMicros + this.maxWaitMicros;
		return (deadline < nowMicros) ? NO_DEADLINE : deadline;
	}

	/**
	 * Returns the longest leaky bucket delay to accept now: what is left before the
	 * deadline, so that waiting for a permit and then for a slot never exceeds it.
	 * @param deadline the deadline from {@link #deadline(long)}
	 * @param nowMicros the current time
	 * @return the delay bound for the store
	 */
	static long maxDelay(long deadline, long nowMicros) {
		return (deadline == NO_DEADLINE) ? RateLimitStore.NO_MAX_DELAY : Math.max(0, deadline - nowMicros);
	}

	/**
	 * Returns how long to wait before asking again after a rejection, or {@code -1} when
	 * the rejection is final: the policy does not wait, no wait can help (the cost is
	 * above a capacity, or a leaky bucket queue drains only after the deadline), or the
	 * permit comes after the deadline. A wait known up front to be in vain is never
	 * started.
	 * @param decision the rejecting decision
	 * @param timeLeftMicros what is left before the deadline
	 * @return the wait in microseconds, or {@code -1}
	 */
	long retryWait(Decision decision, long timeLeftMicros) {
		if (!this.waitForPermits || !decision.retryable() || timeLeftMicros <= 0
				|| decision.retryAfterMicros() > timeLeftMicros || queueOutlasts(decision, timeLeftMicros)) {
			return -1;
		}
		return Math.max(1, Math.min(Math.max(decision.retryAfterMicros(), MIN_RETRY_WAIT_MICROS), timeLeftMicros));
	}

	/**
	 * A leaky bucket slot comes no sooner than its queue drains, however long the caller
	 * waits first: when that is past the deadline, waiting cannot help.
	 */
	private static boolean queueOutlasts(Decision decision, long timeLeftMicros) {
		for (Decision limit : decision.limits()) {
			LimitSpec spec = limit.spec();
			if (!limit.allowed() && spec != null && spec.algorithm() == Algorithm.LEAKY_BUCKET
					&& limit.resetAfterMicros() > timeLeftMicros) {
				return true;
			}
		}
		return false;
	}

	private static long toMicros(Duration maxWait) {
		Objects.requireNonNull(maxWait, "'maxWait' must not be null");
		if (maxWait.isNegative()) {
			throw new IllegalArgumentException("maxWait must not be negative but was " + maxWait);
		}
		try {
			return TimeUnit.NANOSECONDS.toMicros(maxWait.toNanos());
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return this == other || (other instanceof WaitPolicy policy && this.waitForPermits == policy.waitForPermits
				&& this.maxWaitMicros == policy.maxWaitMicros);
	}

	@Override
	public int hashCode() {
		return Long.hashCode(this.maxWaitMicros) * 31 + Boolean.hashCode(this.waitForPermits);
	}

	@Override
	public String toString() {
		return (this.waitForPermits ? "wait up to " : "reject") + ((this.maxWaitMicros < 0) ? ""
				: (this.waitForPermits ? "" : ", delay up to ") + Duration.of(this.maxWaitMicros, ChronoUnit.MICROS));
	}

}
