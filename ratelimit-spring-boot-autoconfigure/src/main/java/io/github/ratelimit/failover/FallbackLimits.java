package io.github.ratelimit.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.github.ratelimit.LimitSpec;

/**
 * The limits each instance enforces on its own while the shared store fails: every limit
 * and burst divided by the number of instances that share them, rounded up, so that
 * {@code n} instances together admit about one limit ({@code n * ceil(L / n)}, less than
 * {@code L + n}) instead of {@code n * L}. Windows, algorithms and segments stay as they
 * are. The number is fixed by configuration, or the instances the shared store last
 * counted alive.
 */
final class FallbackLimits {

	/** Per-call limits ({@code limitExpression}) may be many: don't keep them all. */
	private static final int MAX_CACHED = 10_000;

	private volatile Shares shares;

	/**
	 * Creates the limits.
	 * @param instances how many instances share the limits, at least 1
	 */
	FallbackLimits(int instances) {
		this.shares = new Shares(checked(instances));
	}

	int instances() {
		return this.shares.instances;
	}

	/**
	 * Sets how many instances share the limits from now on.
	 * @param instances the instance count, at least 1
	 */
	void instances(int instances) {
		if (instances != this.shares.instances) {
			this.shares = new Shares(checked(instances));
		}
	}

	private static int checked(int instances) {
		if (instances < 1) {
			throw new IllegalArgumentException("instances must be at least 1 but was " + instances);
		}
		return instances;
	}

	/**
	 * Returns this instance's share of each limit.
	 * @param limits the limits of a call
	 * @return the shares, or {@code limits} itself with one instance
	 */
	List<LimitSpec> of(List<LimitSpec> limits) {
		return this.shares.of(limits);
	}

	/**
	 * This instance's share of what an instance last heard remained of a limit: divided
	 * by the instances, rounded down. Unlike a full limit's share, rounded down: each
	 * instance heard the shared store at its own moment, and missed what the others
	 * admitted since; rounding down takes back up to {@code n - 1} of that.
	 * @param remaining permits that remained of a limit when last heard
	 * @return the share
	 */
	long shareOfRemaining(long remaining) {
		return remaining / this.shares.instances;
	}

	/**
	 * The shares for one number of instances.
	 */
	private static final class Shares {

		private final int instances;

		private final ConcurrentMap<LimitSpec, LimitSpec> cache = new ConcurrentHashMap<>();

		Shares(int instances) {
			this.instances = instances;
		}

		List<LimitSpec> of(List<LimitSpec> limits) {
			if (this.instances == 1) {
				return limits;
			}
			if (limits.size() == 1) {
				return List.of(share(limits.get(0)));
			}
			List<LimitSpec> shares = new ArrayList<>(limits.size());
			for (LimitSpec limit : limits) {
				shares.add(share(limit));
			}
			return shares;
		}

		private LimitSpec share(LimitSpec limit) {
			LimitSpec share = this.cache.get(limit);
			if (share != null) {
				return share;
			}
			share = divide(limit);
			if (this.cache.size() < MAX_CACHED) {
				this.cache.putIfAbsent(limit, share);
			}
			return share;
		}

		private LimitSpec divide(LimitSpec limit) {
			try {
				return limit.toBuilder()
					.limit(divideRoundingUp(limit.limit()))
					.burst(divideRoundingUp(limit.burst()))
					.build();
			}
			catch (IllegalArgumentException ex) {
				// A share the spec rules reject (a burst interval too long to keep
				// exactly): enforce the whole limit rather than none.
				return limit;
			}
		}

		long divideRoundingUp(long value) {
			return value / this.instances + ((value % this.instances == 0) ? 0 : 1);
		}

	}

}
