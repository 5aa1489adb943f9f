package io.github.ratelimit.bucket;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * One key's state as {@link KeyStateReader} read it, in the units a person or a client
 * reads: whole milliseconds, rounded up so that waiting that long is never early.
 *
 * @param specs the limits read, in order
 * @param decision the store's answer to a request of cost 1, not taken
 * @author ratelimit-spring-boot-starter authors
 */
public record KeyState(List<LimitSpec> specs, Decision decision) {

	/**
	 * Checks the state.
	 * @throws IllegalArgumentException when the decision has not one state per limit
	 */
	public KeyState {
		specs = List.copyOf(specs);
		Objects.requireNonNull(decision, "'decision' must not be null");
		if (decision.limits().size() != specs.size()) {
			throw new IllegalArgumentException("a state of " + specs.size() + " limit(s) needs as many decisions but "
					+ "had " + decision.limits().size());
		}
	}

	/**
	 * Returns whether a request of cost 1 would be allowed now.
	 * @return {@code true} when it would
	 */
	public boolean allowed() {
		return this.decision.allowed();
	}

	/**
	 * Returns the permits left in the most restrictive limit.
	 * @return the permits, at least 0
	 */
	public long remaining() {
		return this.decision.remaining();
	}

	/**
	 * Returns the time until every limit is full again.
	 * @return milliseconds, rounded up
	 */
	public long resetAfterMillis() {
		return millis(this.decision.resetAfterMicros());
	}

	/**
	 * Returns the time until a request of cost 1 would be allowed.
	 * @return milliseconds, rounded up; 0 when it would be now, -1 when never
	 */
	public long retryAfterMillis() {
		return this.decision.allowed() ? 0 : millis(this.decision.retryAfterMicros());
	}

	/**
	 * Returns whether the state is a stand-in's (the failure mode's per-instance store,
	 * while the shared store fails) rather than the store's own.
	 * @return {@code true} while the failure mode answers
	 */
	public boolean fromFallback() {
		return this.decision.origin() == Decision.Origin.FALLBACK;
	}

	/**
	 * Returns the state of each limit, in the order of {@link #specs()}.
	 * @return the states
	 */
	public List<LimitState> limits() {
		List<Decision> decisions = this.decision.limits();
		List<LimitState> limits = new ArrayList<>(decisions.size());
		for (int i = 0; i < decisions.size(); i++) {
			Decision state = decisions.get(i);
			limits.add(new LimitState(this.specs.get(i), state.remaining(), millis(state.resetAfterMicros()),
					state.allowed() ? 0 : millis(state.retryAfterMicros())));
		}
		return limits;
	}

	private static long millis(long micros) {
		if (micros == Decision.NEVER) {
			return -1;
		}
		// Rounded up without adding first, which could overflow.
		return micros / 1000 + ((micros % 1000 > 0) ? 1 : 0);
	}

	/**
	 * One limit's state for the key.
	 *
	 * @param spec the limit
	 * @param remaining permits left
	 * @param resetAfterMillis time until the limit is full again, rounded up
	 * @param retryAfterMillis time until this limit would allow a request of cost 1: 0
	 * when it would now, -1 when never
	 */
	public record LimitState(LimitSpec spec, long remaining, long resetAfterMillis, long retryAfterMillis) {
	}

}
