package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Runs the sides of a comparison in rounds, alternating their order (A B, B A, A B, ...:
 * with two sides, ABBA), so that each round is a pair measured under the same machine
 * conditions, and records per round the throughput of every side and the CPU other
 * processes used, and the time a cache line takes to cross between two cores and back
 * ({@link CrossCoreProbe}: on a virtual machine it changes with the host's placement of
 * the vCPUs, invisibly to {@code /proc}). A comparison's ratio is the median of the
 * per-round ratios ({@link #measurements}), which a single disturbed trial cannot move
 * much, where the ratio of two medians taken from different moments could. Rounds in
 * which other processes kept the machine {@linkplain MachineLoad#busy(double) busy} are
 * left out of it: a third of a run's rounds measured beside another process's work moved
 * the median of one comparison by a fifth between two runs, while still less than the
 * half of the rounds that makes the whole ratio invalid.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class PairedTrials {

	/**
	 * One trial of one side.
	 */
	@FunctionalInterface
	interface Trial {

		/**
		 * Runs one trial.
		 * @param side the side's name
		 * @return the throughput, and any further figures, of the trial
		 * @throws Exception when the trial fails
		 */
		Figures run(String side) throws Exception;

	}

	/**
	 * What one trial measured: {@code throughput} first, then optional figures such as
	 * {@code p50} and {@code p99}.
	 *
	 * @param values metric name to value, throughput first
	 */
	record Figures(Map<String, Double> values) {

		static Figures throughput(double opsPerSecond) {
			return new Figures(Map.of("throughput", opsPerSecond));
		}

	}

	private final Map<String, Map<String, double[]>> samples = new LinkedHashMap<>();

	private final double[] otherCores;

	private final double[] loadAverages;

	private final double[] crossCoreNanos;

	private final boolean[] busy;

	private final String unit;

	private PairedTrials(int rounds, String unit) {
		this.unit = unit;
		this.busy = new boolean[rounds];
		this.otherCores = new double[rounds];
		this.loadAverages = new double[rounds];
		this.crossCoreNanos = new double[rounds];
	}

	/**
	 * Runs {@code rounds} rounds of one trial per side.
	 * @param sides the sides, ours first
	 * @param rounds rounds (pairs)
	 * @param load the machine load meter
	 * @param unit the unit of throughput, e.g. {@code decisions/s}
	 * @param trial the trial
	 * @return the samples
	 * @throws Exception when a trial fails
	 */
	static PairedTrials run(List<String> sides, int rounds, MachineLoad load, String unit, Trial trial)
			throws Exception {
		PairedTrials result = new PairedTrials(rounds, unit);
		for (int round = 0; round < rounds; round++) {
			List<String> order = new ArrayList<>(sides);
			if (round % 2 == 1) {
				Collections.reverse(order);
			}
			MachineLoad.Snapshot start = load.now();
			for (String side : order) {
				Figures figures = trial.run(side);
				for (Map.Entry<String, Double> figure : figures.values().entrySet()) {
					result.samples.computeIfAbsent(side, (k) -> new LinkedHashMap<>())
						.computeIfAbsent(figure.getKey(), (k) -> new double[rounds])[round] = figure.getValue();
				}
			}
			MachineLoad.Snapshot end = load.now();
			result.otherCores[round] = end.otherCoresSince(start);
			result.busy[round] = load.busy(result.otherCores[round]);
			result.loadAverages[round] = Math.max(start.loadAverage(), end.loadAverage());
			result.crossCoreNanos[round] = CrossCoreProbe.roundTripNanos();
			result.printRound(round, order);
		}
		return result;
	}

	/**
	 * Prints one round's throughputs in the order they ran, so that a drift or a
	 * disturbed round can be seen in the log and not only in the spread.
	 */
	private void printRound(int round, List<String> order) {
		StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "  round %2d:", round + 1));
		for (String side : order) {
			line.append(String.format(Locale.ROOT, " %s %.0f;", side, samples(side, "throughput")[round]));
		}
		line.append(String.format(Locale.ROOT, " other processes %.2f cores; cross-core round trip %.0f ns%s",
				this.otherCores[round], this.crossCoreNanos[round],
				this.busy[round] ? "; busy: left out of the ratio" : ""));
		System.out.println(line);
	}

	/**
	 * Returns the samples of one side and metric, one per round.
	 * @param side the side
	 * @param metric the metric
	 * @return the samples
	 */
	double[] samples(String side, String metric) {
		return Objects.requireNonNull(Objects.requireNonNull(this.samples.get(side), side).get(metric),
				side + " " + metric);
	}

	/**
	 * Returns the measurements of a comparison between some of the sides: each side's
	 * figures under its impl name, the per-round ratios ours / peer of the rounds that
	 * were not busy as metric {@code pair-ratio} of each peer (of every round when all
	 * were busy, so that a ratio marked invalid still has a value to show), and the
	 * machine's load per round (impl {@code machine}: {@code other-cpu} in cores,
	 * {@code loadavg}, {@code cross-core} in nanoseconds).
	 * @param comparison the comparison
	 * @param variant the variant
	 * @param impls side to impl name, ours first ({@code "ours"}), then the peers
	 * @return the measurements
	 */
	List<Measurement> measurements(String comparison, String variant, Map<String, String> impls) {
		List<Measurement> result = new ArrayList<>();
		for (Map.Entry<String, String> side : impls.entrySet()) {
			for (Map.Entry<String, double[]> metric : Objects.requireNonNull(this.samples.get(side.getKey()))
				.entrySet()) {
				result.add(Measurement.of(comparison, variant, side.getValue(), metric.getKey(), unit(metric.getKey()),
						metric.getValue()));
			}
		}
		String ours = impls.keySet().iterator().next();
		for (Map.Entry<String, String> side : impls.entrySet()) {
			if (!side.getKey().equals(ours)) {
				result.add(Measurement.of(comparison, variant, side.getValue(), "pair-ratio", "ours/theirs",
						pairRatios(ours, side.getKey())));
			}
		}
		result.add(Measurement.of(comparison, variant, "machine", "other-cpu", "cores", this.otherCores));
		result.add(Measurement.of(comparison, variant, "machine", "loadavg", "", this.loadAverages));
		result.add(Measurement.of(comparison, variant, "machine", "cross-core", "ns", this.crossCoreNanos));
		return result;
	}

	/**
	 * Returns the throughput of {@code ours} / {@code peer}, one ratio per round that was
	 * not busy, or per round when every round was.
	 * @param ours the numerator's side
	 * @param peer the denominator's side
	 * @return the ratios
	 */
	double[] pairRatios(String ours, String peer) {
		return quietRatios(samples(ours, "throughput"), samples(peer, "throughput"), this.busy);
	}

	static double[] quietRatios(double[] numerators, double[] denominators, boolean[] busy) {
		boolean allBusy = true;
		for (boolean b : busy) {
			allBusy &= b;
		}
		List<Double> ratios = new ArrayList<>();
		for (int i = 0; i < numerators.length; i++) {
			if (allBusy || !busy[i]) {
				ratios.add(numerators[i] / denominators[i]);
			}
		}
		return ratios.stream().mapToDouble(Double::doubleValue).toArray();
	}

	private String unit(String metric) {
		return metric.equals("throughput") ? this.unit : "ms";
	}

}
