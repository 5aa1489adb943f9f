package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link MemoryStoreBenchmark} with JMH and records {@code memory-vs-bucket4j-local}
 * and {@code memory-vs-resilience4j} on 1 and 2 threads, 1 key and 100,000, all allowed
 * and almost all rejected.
 * <p>
 * Paired like every comparison: per variant, rounds of one single-fork JMH run per
 * implementation, the order alternating between rounds, so the three forks of a round
 * meet the same machine. A fork's figure is the median of its measurement iterations; a
 * ratio is the median of the rounds' ratios.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class MemoryComparison {

	private static final Map<String, String> COMPARISONS = Map.of("bucket4j", "memory-vs-bucket4j-local",
			"resilience4j", "memory-vs-resilience4j");

	private MemoryComparison() {
	}

	static void main(Options options) throws Exception {
		boolean quick = options.quick();
		// Forks differ more than iterations within one, so rounds are what steady a
		// median: the one-key variants (the goals) get as many in a quick run as in a
		// full one. Seven, not five: with five, the median of two quick runs was 27%
		// apart once (0.40 and 0.51 against Resilience4j on two threads).
		int rounds = options.intValue("rounds", 7);
		int roundsOn100k = options.intValue("rounds", quick ? 3 : 5);
		List<String> impls = List.of(options.value("impls", "ours,bucket4j,resilience4j").split(","));
		MachineLoad load = MachineLoad.of(options);
		List<Measurement> measurements = new ArrayList<>();
		for (int threads : new int[] { 1, 2 }) {
			for (String keys : new String[] { "1", "100000" }) {
				for (String outcome : new String[] { "allow", "reject" }) {
					String variant = "t" + threads + "-" + ("1".equals(keys) ? "1key" : "100k") + "-" + outcome;
					PairedTrials pairs = PairedTrials.run(impls, "1".equals(keys) ? rounds : roundsOn100k, load,
							"decisions/s",
							(impl) -> PairedTrials.Figures.throughput(fork(impl, threads, keys, outcome, quick)));
					for (String peer : impls) {
						String comparison = COMPARISONS.get(peer);
						if (comparison != null && impls.contains("ours")) {
							Map<String, String> sides = new LinkedHashMap<>();
							sides.put("ours", "ours");
							sides.put(peer, peer);
							measurements.addAll(pairs.measurements(comparison, variant, sides));
						}
					}
				}
			}
		}
		Measurement.append(options.csv(), measurements);
	}

	/**
	 * Runs one JMH fork of one implementation and returns the median of its measurement
	 * iterations, in decisions per second.
	 */
	private static double fork(String impl, int threads, String keys, String outcome, boolean quick) throws Exception {
		OptionsBuilder jmh = new OptionsBuilder();
		jmh.include(MemoryStoreBenchmark.class.getName() + ".decide")
			.param("impl", impl)
			.param("keys", keys)
			.param("outcome", outcome)
			.threads(threads)
			.forks(1)
			.jvmArgsAppend("-Xms1g", "-Xmx1g")
			// Our path (a Caffeine map, the acquisition) has more code to compile than
			// the peers' tryConsume: too short a warm-up measures the JIT compiler, not
			// the limiter. Quick runs warm up as long as full ones: after 5 x 400 ms,
			// one-thread forks of every implementation still ran at a fifth to a third
			// of their speed in two quick runs in a row.
			.warmupIterations(4)
			.warmupTime(TimeValue.milliseconds(750))
			.measurementIterations(quick ? 3 : 4)
			.measurementTime(TimeValue.milliseconds(quick ? 300 : 500))
			.timeUnit(TimeUnit.SECONDS)
			.verbosity(VerboseMode.SILENT)
			.shouldFailOnError(true);
		Collection<RunResult> results = new Runner(jmh.build()).run();
		List<Double> scores = new ArrayList<>();
		for (RunResult result : results) {
			for (BenchmarkResult benchmark : result.getBenchmarkResults()) {
				for (IterationResult iteration : benchmark.getIterationResults()) {
					scores.add(iteration.getPrimaryResult().getScore());
				}
			}
		}
		double[] sorted = scores.stream().mapToDouble(Double::doubleValue).sorted().toArray();
		if (sorted.length == 0) {
			throw new IllegalStateException("JMH measured nothing for " + impl + " " + threads + " thread(s)");
		}
		double median = Measurement.median(sorted);
		System.out.printf(Locale.ROOT, "  t%d %s keys %s %s: %.0f decisions/s (iterations %s)%n", threads, impl, keys,
				outcome, median, Arrays.toString(sorted));
		return median;
	}

}
