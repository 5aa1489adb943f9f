package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link MemoryStoreBenchmark} with JMH on 1 and 2 threads and records
 * {@code memory-vs-bucket4j-local} and {@code memory-vs-resilience4j}: the median and
 * spread of the measurement iterations, in decisions per second.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class MemoryComparison {

	private MemoryComparison() {
	}

	static void main(Options options) throws Exception {
		boolean quick = options.quick();
		List<Measurement> measurements = new ArrayList<>();
		for (int threads : new int[] { 1, 2 }) {
			ChainedOptionsBuilder jmh = new OptionsBuilder().include(MemoryStoreBenchmark.class.getName() + ".decide")
				.threads(threads)
				.forks(1)
				.jvmArgsAppend("-Xms1g", "-Xmx1g")
				.warmupIterations(quick ? 2 : 5)
				.warmupTime(TimeValue.milliseconds(quick ? 400 : 1000))
				.measurementIterations(quick ? 3 : 7)
				.measurementTime(TimeValue.milliseconds(quick ? 400 : 1000))
				.timeUnit(TimeUnit.SECONDS)
				.shouldFailOnError(true);
			String log = options.value("jmh-log", "");
			if (!log.isEmpty()) {
				jmh.output(log + ".t" + threads);
			}
			String impls = options.value("impls", "");
			if (!impls.isEmpty()) {
				jmh.param("impl", impls.split(","));
			}
			Collection<RunResult> results = new Runner(jmh.build()).run();
			for (RunResult result : results) {
				measurements.addAll(toMeasurements(result, threads));
			}
		}
		Measurement.append(options.csv(), measurements);
	}

	private static List<Measurement> toMeasurements(RunResult result, int threads) {
		String impl = result.getParams().getParam("impl");
		String keys = result.getParams().getParam("keys");
		String outcome = result.getParams().getParam("outcome");
		String variant = "t" + threads + "-" + ("1".equals(keys) ? "1key" : "100k") + "-" + outcome;
		List<Double> scores = new ArrayList<>();
		for (BenchmarkResult benchmark : result.getBenchmarkResults()) {
			for (IterationResult iteration : benchmark.getIterationResults()) {
				scores.add(iteration.getPrimaryResult().getScore());
			}
		}
		double[] samples = scores.stream().mapToDouble(Double::doubleValue).toArray();
		List<Measurement> measurements = new ArrayList<>();
		if ("ours".equals(impl)) {
			// Ours is the numerator of both comparisons.
			measurements
				.add(Measurement.of("memory-vs-bucket4j-local", variant, impl, "throughput", "decisions/s", samples));
			measurements
				.add(Measurement.of("memory-vs-resilience4j", variant, impl, "throughput", "decisions/s", samples));
		}
		else {
			String comparison = "bucket4j".equals(impl) ? "memory-vs-bucket4j-local" : "memory-vs-resilience4j";
			measurements.add(Measurement.of(comparison, variant, impl, "throughput", "decisions/s", samples));
		}
		return measurements;
	}

}
