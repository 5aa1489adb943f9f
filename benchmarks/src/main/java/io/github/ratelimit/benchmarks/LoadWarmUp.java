package io.github.ratelimit.benchmarks;

import java.time.Duration;
import java.util.List;

/**
 * When a warm-up has done its job: the app's throughput under the load about to be
 * measured has stopped climbing.
 * <p>
 * A fixed warm-up was not enough on two cores. Three app JVMs, a {@code redis-server} and
 * the load generator leave the JIT compiler little CPU under 16 connections, and the
 * sample app on Redis kept climbing through the measured rounds (one quick run: 3.2k,
 * 2.5k, 3.1k, 4.1k, ... 7.5k requests a second over eleven rounds, a factor of three,
 * while the unlimited app rose from 13.8k to 22-27k), so its ratio depended on how far
 * the compiler had got, not on the limiter. Warming each app until its one-second
 * throughputs level off ends that climb before the first measured round.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class LoadWarmUp {

	/**
	 * The longest warm-up of one app under one load, by default ({@code --load-warmup}).
	 */
	static final Duration MAXIMUM = Duration.ofSeconds(30);

	/** One-second trials compared at a time. */
	static final int WINDOW = 3;

	/** How much the latest window may beat the one before it and still count as level. */
	static final double TOLERANCE = 0.05;

	private LoadWarmUp() {
	}

	/**
	 * Whether throughput has levelled off: the mean of the last {@link #WINDOW} trials is
	 * at most {@link #TOLERANCE} above the mean of the {@link #WINDOW} before them. A
	 * window below the one before it counts as level too: noise, or a disturbance that
	 * more warming will not cure.
	 * @param throughputs one-second throughputs, oldest first
	 * @return whether the last two windows are level
	 */
	static boolean levelled(List<Double> throughputs) {
		int n = throughputs.size();
		if (n < 2 * WINDOW) {
			return false;
		}
		double latest = mean(throughputs.subList(n - WINDOW, n));
		double before = mean(throughputs.subList(n - 2 * WINDOW, n - WINDOW));
		return latest <= before * (1 + TOLERANCE);
	}

	private static double mean(List<Double> values) {
		double sum = 0;
		for (double value : values) {
			sum += value;
		}
		return sum / values.size();
	}

}
