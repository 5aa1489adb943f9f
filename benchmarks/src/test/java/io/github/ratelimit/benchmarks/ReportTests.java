package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A ratio is the median of the per-pair ratios, the headline is the worst variant its
 * goal is about, and a ratio measured on a busy machine is marked invalid.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class ReportTests {

	private static final String HOT = "redis-vs-bucket4j-lettuce-hot";

	@Test
	void headlineIsTheLowestRatioOfTheComparison() {
		List<Measurement> measurements = List.of(
				Measurement.of(HOT, "hot-c16", "ours", "throughput", "decisions/s", new double[] { 100, 120, 80 }),
				Measurement.of(HOT, "hot-c16", "bucket4j-lettuce", "throughput", "decisions/s",
						new double[] { 10, 20, 30 }),
				Measurement.of(HOT, "hot-c64", "ours", "throughput", "decisions/s", new double[] { 90 }),
				Measurement.of(HOT, "hot-c64", "bucket4j-lettuce", "throughput", "decisions/s", new double[] { 3 }));
		List<Ratios.Ratio> ratios = Ratios.of(measurements, Ratios.DEFAULT_BUSY_CORES);
		assertThat(ratios).filteredOn(Ratios.Ratio::headline).singleElement().satisfies((headline) -> {
			assertThat(headline.variant()).isEqualTo("hot-c16");
			assertThat(headline.value()).isEqualTo(5.0);
			assertThat(headline.range()).isEqualTo("unpaired");
		});
		assertThat(ratios).filteredOn((ratio) -> !ratio.headline()).hasSize(2);
	}

	@Test
	void inMemoryHeadlineIsTheLowestOneKeyVariant() {
		String memory = "memory-vs-bucket4j-local";
		List<Measurement> measurements = List.of(
				Measurement.of(memory, "t1-1key-allow", "ours", "throughput", "decisions/s", new double[] { 90 }),
				Measurement.of(memory, "t1-1key-allow", "bucket4j", "throughput", "decisions/s", new double[] { 100 }),
				Measurement.of(memory, "t2-1key-reject", "ours", "throughput", "decisions/s", new double[] { 80 }),
				Measurement.of(memory, "t2-1key-reject", "bucket4j", "throughput", "decisions/s", new double[] { 100 }),
				Measurement.of(memory, "t2-100k-reject", "ours", "throughput", "decisions/s", new double[] { 10 }),
				Measurement.of(memory, "t2-100k-reject", "bucket4j", "throughput", "decisions/s",
						new double[] { 100 }));
		List<Ratios.Ratio> ratios = Ratios.of(measurements, Ratios.DEFAULT_BUSY_CORES);
		assertThat(ratios).filteredOn(Ratios.Ratio::headline).singleElement().satisfies((headline) -> {
			assertThat(headline.variant()).isEqualTo("t2-1key-reject");
			assertThat(headline.value()).isEqualTo(0.8);
		});
		assertThat(ratios).filteredOn((ratio) -> !ratio.headline())
			.extracting(Ratios.Ratio::variant)
			.containsExactly("t1-1key-allow", "t2-1key-reject", "t2-100k-reject");
	}

	@Test
	void pairedRatioIsTheMedianOfThePairsNotTheRatioOfTheMedians() {
		// Round 2 ran while the machine slowed both sides: its pair still says 2.
		List<Measurement> measurements = pairedHotC16(new double[] { 100, 40, 90 }, new double[] { 80, 20, 30 },
				new double[] { 1.25, 2, 3 }, new double[] { 0.01, 0.02, 0.9 });
		Ratios.Ratio headline = headline(measurements, 0.2);
		assertThat(headline.value()).isEqualTo(2.0);
		assertThat(headline.busy()).isFalse();
		assertThat(headline.range()).isEqualTo("1.25–3.00 (3 pairs)");
		assertThat(Report.ratioLine(headline, 0.2))
			.isEqualTo("RATIO redis-vs-bucket4j-lettuce-hot 2.000 range 1.250-3.000 pairs 3 other-cpu 0.02");
	}

	@Test
	void ratioLineNamesTheCrossCoreRoundTripOfItsRounds() {
		List<Measurement> measurements = new ArrayList<>(pairedHotC16(new double[] { 100, 90, 80 },
				new double[] { 50, 45, 40 }, new double[] { 2, 2, 2 }, new double[] { 0, 0, 0 }));
		measurements.add(Measurement.of(HOT, "hot-c16", "machine", "cross-core", "ns", new double[] { 180, 620, 210 }));
		assertThat(Report.ratioLine(headline(measurements, 0.2), 0.2)).isEqualTo(
				"RATIO redis-vs-bucket4j-lettuce-hot 2.000 range 2.000-2.000 pairs 3 other-cpu 0.00 cross-core-ns 210 (180-620)");
	}

	@Test
	void ratioIsInvalidWhenOtherProcessesKeptTheMachineBusyInHalfThePairs() {
		List<Measurement> measurements = List.of(
				Measurement.of(HOT, "hot-c16", "ours", "throughput", "decisions/s", new double[] { 100, 100 }),
				Measurement.of(HOT, "hot-c16", "bucket4j-lettuce", "throughput", "decisions/s",
						new double[] { 50, 50 }),
				Measurement.of(HOT, "hot-c16", "bucket4j-lettuce", "pair-ratio", "ours/theirs", new double[] { 2, 2 }),
				Measurement.of(HOT, "hot-c16", "machine", "other-cpu", "cores", new double[] { 0.5, 0.7 }),
				Measurement.of(HOT, "hot-c64", "ours", "throughput", "decisions/s", new double[] { 100, 100 }),
				Measurement.of(HOT, "hot-c64", "bucket4j-lettuce", "throughput", "decisions/s",
						new double[] { 10, 10 }),
				Measurement.of(HOT, "hot-c64", "bucket4j-lettuce", "pair-ratio", "ours/theirs",
						new double[] { 10, 10 }),
				Measurement.of(HOT, "hot-c64", "machine", "other-cpu", "cores", new double[] { 0, 0 }));
		Ratios.Ratio headline = headline(measurements, 0.2);
		assertThat(headline.busy()).isTrue();
		assertThat(headline.met()).isFalse();
		assertThat(Report.ratioLine(headline, 0.2))
			.startsWith("RATIO redis-vs-bucket4j-lettuce-hot 2.000 INVALID busy");
	}

	@Test
	void ratioLineSaysHowManyRoundsWereLeftOutAsBusy() {
		List<Measurement> measurements = List.of(
				Measurement.of(HOT, "hot-c16", "ours", "throughput", "decisions/s", new double[] { 100, 100, 100 }),
				Measurement.of(HOT, "hot-c16", "bucket4j-lettuce", "throughput", "decisions/s",
						new double[] { 50, 50, 90 }),
				// The third round was busy: its pair is not among the ratios.
				Measurement.of(HOT, "hot-c16", "bucket4j-lettuce", "pair-ratio", "ours/theirs", new double[] { 2, 2 }),
				Measurement.of(HOT, "hot-c16", "machine", "other-cpu", "cores", new double[] { 0, 0, 0.6 }));
		Ratios.Ratio headline = headline(measurements, 0.2);
		assertThat(headline.busy()).isFalse();
		assertThat(headline.range()).isEqualTo("2.00–2.00 (2 of 3 pairs)");
		assertThat(Report.ratioLine(headline, 0.2))
			.isEqualTo("RATIO redis-vs-bucket4j-lettuce-hot 2.000 range 2.000-2.000 pairs 2 of 3 other-cpu 0.00");
	}

	@Test
	void latencyBaselineWithoutPairsIsNotAPeer() {
		String comparison = "http-vs-bucket4j-starter-hot";
		List<Measurement> measurements = List.of(
				Measurement.of(comparison, "hot-c16", "ours", "throughput", "requests/s", new double[] { 100 }),
				Measurement.of(comparison, "hot-c16", "bucket4j-starter", "throughput", "requests/s",
						new double[] { 10 }),
				Measurement.of(comparison, "hot-c16", "unlimited", "throughput", "requests/s", new double[] { 120 }),
				Measurement.of(comparison, "hot-c16", "bucket4j-starter", "pair-ratio", "ours/theirs",
						new double[] { 10 }));
		assertThat(Ratios.of(measurements, 0.2)).extracting(Ratios.Ratio::peer).containsOnly("bucket4j-starter");
	}

	@Test
	void measurementSurvivesTheCsv() {
		Measurement measurement = Measurement.of("c", "v", "ours", "throughput", "decisions/s",
				new double[] { 3, 1, 2, 10 });
		assertThat(measurement.median()).isEqualTo(2.5);
		assertThat(Measurement.fromCsv(measurement.toCsv())).isEqualTo(measurement);
	}

	private static Ratios.Ratio headline(List<Measurement> measurements, double busyCores) {
		return Ratios.of(measurements, busyCores).stream().filter(Ratios.Ratio::headline).findFirst().orElseThrow();
	}

	/** Ours against Bucket4j on the hot key at 16 in flight, paired, with the load. */
	private static List<Measurement> pairedHotC16(double[] ours, double[] theirs, double[] pairs, double[] otherCpu) {
		return List.of(Measurement.of(HOT, "hot-c16", "ours", "throughput", "decisions/s", ours),
				Measurement.of(HOT, "hot-c16", "bucket4j-lettuce", "throughput", "decisions/s", theirs),
				Measurement.of(HOT, "hot-c16", "bucket4j-lettuce", "pair-ratio", "ours/theirs", pairs),
				Measurement.of(HOT, "hot-c16", "machine", "other-cpu", "cores", otherCpu));
	}

}
