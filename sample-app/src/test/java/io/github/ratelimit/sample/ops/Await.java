package io.github.ratelimit.sample.ops;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Waits for a condition, checking it every 50 ms, and fails once a generous bound has
 * passed: tests wait for what they expect, never for a time tuned to this machine.
 */
final class Await {

	private Await() {
	}

	/**
	 * Returns once {@code condition} holds.
	 * @param what the condition, for the failure message
	 * @param bound how long to wait at the most
	 * @param condition the condition
	 */
	static void until(String what, Duration bound, BooleanSupplier condition) {
		long deadline = System.nanoTime() + bound.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

}
