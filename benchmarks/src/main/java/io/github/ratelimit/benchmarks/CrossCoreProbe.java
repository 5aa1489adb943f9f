package io.github.ratelimit.benchmarks;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * What one cache line costs to cross between two cores and back, measured by two threads
 * handing a value back and forth: the machine condition that {@code /proc} does not show.
 * <p>
 * On a virtual machine the same two vCPUs can sit on cores that share a cache or on cores
 * that do not, and the hypervisor may move them between runs or within one. A limiter's
 * state touched by two threads crosses cores on each decision, so its throughput (ours
 * and every peer's, by different amounts) follows this round trip; the benchmark records
 * it per round beside the CPU other processes used, so that a round on the slow placement
 * can be told apart from a slower limiter.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class CrossCoreProbe {

	/** Round trips timed: about 10 ms at the 500 ns seen on a slow placement. */
	private static final int ROUND_TRIPS = 20_000;

	/** Round trips before the timing starts, while the echo thread gets going. */
	private static final int WARMUP = 2_000;

	private CrossCoreProbe() {
	}

	/**
	 * Measures the mean round trip over {@link #ROUND_TRIPS} hand-offs.
	 * @return nanoseconds per round trip
	 * @throws InterruptedException when interrupted
	 */
	static double roundTripNanos() throws InterruptedException {
		AtomicInteger ball = new AtomicInteger();
		Thread echo = new Thread(() -> {
			for (int i = 0; i < WARMUP + ROUND_TRIPS; i++) {
				while (ball.get() != 1) {
					Thread.onSpinWait();
				}
				ball.set(0);
			}
		}, "cross-core-probe");
		echo.setDaemon(true);
		echo.start();
		long start = 0;
		for (int i = 0; i < WARMUP + ROUND_TRIPS; i++) {
			if (i == WARMUP) {
				start = System.nanoTime();
			}
			ball.set(1);
			while (ball.get() != 0) {
				Thread.onSpinWait();
			}
		}
		long elapsed = System.nanoTime() - start;
		echo.join();
		return (double) elapsed / ROUND_TRIPS;
	}

}
