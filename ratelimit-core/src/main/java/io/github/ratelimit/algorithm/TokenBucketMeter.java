package io.github.ratelimit.algorithm;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;

/**
 * {@link Algorithm#TOKEN_BUCKET}: capacity {@code B}, refilled continuously at one permit
 * per emission interval {@code T = W / L}. Tokens are kept as credit in nanoseconds
 * ({@code tokens * T}), so refill and consumption are exact integer arithmetic.
 */
final class TokenBucketMeter extends Meter {

	/**
	 * Credit in nanoseconds at {@link #updated}; {@code -1} for a fresh (full) bucket.
	 */
	private long credit = -1;

	private long updated;

	@Override
	public Algorithm algorithm() {
		return Algorithm.TOKEN_BUCKET;
	}

	@Override
	public boolean isDryRunReadOnly() {
		return true;
	}

	@Override
	public Decision tryAcquire(LimitSpec spec, long now, long cost, long maxDelayMicros, boolean commit) {
		long interval = spec.emissionIntervalNanos();
		long capacity = spec.burst() * interval;
		long available = creditAt(now, capacity);
		if (cost <= spec.burst() && cost * interval <= available) {
			long left = available - cost * interval;
			if (commit) {
				this.credit = left;
				this.updated = now;
			}
			return Decision.allowed(spec, left / interval, nanosToMicrosCeil(capacity - left), 0);
		}
		long retryAfter = (cost > spec.burst()) ? Decision.NEVER : nanosToMicrosCeil(cost * interval - available);
		return Decision.rejected(spec, available / interval, nanosToMicrosCeil(capacity - available), retryAfter);
	}

	@Override
	public void refund(LimitSpec spec, long now, long cost) {
		long interval = spec.emissionIntervalNanos();
		long capacity = spec.burst() * interval;
		long available = creditAt(now, capacity);
		this.credit = (cost >= spec.burst()) ? capacity : Math.min(capacity, available + cost * interval);
		this.updated = now;
	}

	@Override
	long available(LimitSpec spec, long now) {
		long interval = spec.emissionIntervalNanos();
		return creditAt(now, spec.burst() * interval) / interval;
	}

	@Override
	long resetAfterMicros(LimitSpec spec, long now) {
		long capacity = spec.burst() * spec.emissionIntervalNanos();
		return nanosToMicrosCeil(capacity - creditAt(now, capacity));
	}

	@Override
	public long expiresAtMicros(LimitSpec spec) {
		if (this.credit < 0) {
			return Long.MIN_VALUE;
		}
		return this.updated + nanosToMicrosCeil(spec.burst() * spec.emissionIntervalNanos() - this.credit);
	}

	private long creditAt(long now, long capacity) {
		if (this.credit < 0) {
			return capacity;
		}
		long missing = capacity - this.credit;
		long elapsedMicros = now - this.updated;
		// Compare before multiplying: a long idle time would overflow.
		if (elapsedMicros >= nanosToMicrosCeil(missing)) {
			return capacity;
		}
		return Math.min(capacity, this.credit + elapsedMicros * 1000L);
	}

}
