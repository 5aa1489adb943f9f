package io.github.ratelimit.failover;

import java.time.Duration;
import java.util.Objects;

/**
 * When the {@link CircuitBreaker} in front of a store opens and how it tries the store
 * again.
 *
 * @param window how long calls must keep failing before the breaker opens
 * @param failureRateThreshold the share of failed calls, in percent, that counts as
 * failing
 * @param waitInOpenState how long an open breaker sends every call to the failure mode
 * before it tries the store again
 * @param probes how many calls try the store when the wait is over; all must succeed for
 * the breaker to close
 * @author ratelimit-spring-boot-starter authors
 */
public record BreakerSettings(Duration window, int failureRateThreshold, Duration waitInOpenState, int probes) {

	/**
	 * The defaults: open after 1 second of at least half the calls failing, wait 1
	 * second, then try 3 calls.
	 */
	public static final BreakerSettings DEFAULTS = new BreakerSettings(Duration.ofSeconds(1), 50, Duration.ofSeconds(1),
			3);

	/**
	 * Checks the values.
	 * @param window positive
	 * @param failureRateThreshold 1 to 100
	 * @param waitInOpenState positive
	 * @param probes at least 1
	 * @throws IllegalArgumentException naming the first invalid value
	 */
	public BreakerSettings {
		Objects.requireNonNull(window, "'window' must not be null");
		Objects.requireNonNull(waitInOpenState, "'waitInOpenState' must not be null");
		if (window.isNegative() || window.isZero()) {
			throw new IllegalArgumentException("window must be positive but was " + window);
		}
		if (failureRateThreshold < 1 || failureRateThreshold > 100) {
			throw new IllegalArgumentException(
					"failureRateThreshold must be between 1 and 100 but was " + failureRateThreshold);
		}
		if (waitInOpenState.isNegative() || waitInOpenState.isZero()) {
			throw new IllegalArgumentException("waitInOpenState must be positive but was " + waitInOpenState);
		}
		if (probes < 1) {
			throw new IllegalArgumentException("probes must be at least 1 but was " + probes);
		}
	}

}
