package io.github.ratelimit.concurrency;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;

/**
 * What one store call decided for a request limited both by the rate and by the
 * concurrency of one bucket ({@link RateAndConcurrencyStore#decideHolding}).
 *
 * @param permit the concurrency limit's answer: {@link ConcurrencyDecision#acquired()}
 * when the holder holds a permit after the call
 * @param rate the rate limits' decision, or {@code null} when no permit was free: the
 * rate limits were not asked, and took nothing
 * @author ratelimit-spring-boot-starter authors
 */
public record HeldDecision(ConcurrencyDecision permit, @Nullable Decision rate) {

	/**
	 * Checks the fields.
	 * @param permit the concurrency limit's answer
	 * @param rate the rate limits' decision, or {@code null}
	 */
	public HeldDecision {
		Objects.requireNonNull(permit, "'permit' must not be null");
		if (rate == null && permit.acquired()) {
			throw new IllegalArgumentException("a permit is taken only with a decision of the rate limits");
		}
	}

}
