package io.github.ratelimit.concurrency;

import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The permit the current thread's call holds, while a blocking call limited by
 * {@code @ConcurrencyLimited} runs: a call that must never overlap another checks
 * {@link ConcurrencyPermit#leaseExpired()} before each step it protects (a JVM stopped
 * for longer than the lease may resume with its permit gone).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class HeldPermits {

	private static final ThreadLocal<@Nullable ConcurrencyPermit> current = new ThreadLocal<>();

	private HeldPermits() {
	}

	/**
	 * Returns the permit of the call running on this thread.
	 * @return the permit, or empty outside a limited blocking call
	 */
	public static Optional<ConcurrencyPermit> current() {
		return Optional.ofNullable(current.get());
	}

	/**
	 * Sets the permit of the call about to run on this thread.
	 * @param permit the permit, or {@code null} once the call returned
	 * @return the permit set before, to restore afterwards
	 */
	public static @Nullable ConcurrencyPermit set(@Nullable ConcurrencyPermit permit) {
		ConcurrencyPermit previous = current.get();
		if (permit != null) {
			current.set(permit);
		}
		else {
			current.remove();
		}
		return previous;
	}

}
