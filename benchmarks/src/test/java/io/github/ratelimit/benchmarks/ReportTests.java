package io.github.ratelimit.benchmarks;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ratios are ours / theirs of the medians, and the headline is the worst variant.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class ReportTests {

	@Test
	void headlineIsTheLowestRatioOfTheComparison() {
		List<Measurement> measurements = List.of(
				Measurement.of("redis-vs-bucket4j-lettuce-hot", "hot-c16", "ours", "throughput", "decisions/s",
						new double[] { 100, 120, 80 }),
				Measurement.of("redis-vs-bucket4j-lettuce-hot", "hot-c16", "bucket4j-lettuce", "throughput",
						"decisions/s", new double[] { 10, 20, 30 }),
				Measurement.of("redis-vs-bucket4j-lettuce-hot", "hot-c64", "ours", "throughput", "decisions/s",
						new double[] { 90 }),
				Measurement.of("redis-vs-bucket4j-lettuce-hot", "hot-c64", "bucket4j-lettuce", "throughput",
						"decisions/s", new double[] { 3 }));
		List<Report.Ratio> ratios = Report.ratios(measurements);
		assertThat(ratios).filteredOn(Report.Ratio::headline).singleElement().satisfies((headline) -> {
			assertThat(headline.variant()).isEqualTo("hot-c16");
			assertThat(headline.value()).isEqualTo(5.0);
		});
		assertThat(ratios).filteredOn((ratio) -> !ratio.headline()).hasSize(2);
	}

	@Test
	void measurementSurvivesTheCsv() {
		Measurement measurement = Measurement.of("c", "v", "ours", "throughput", "decisions/s",
				new double[] { 3, 1, 2, 10 });
		assertThat(measurement.median()).isEqualTo(2.5);
		assertThat(Measurement.fromCsv(measurement.toCsv())).isEqualTo(measurement);
	}

}
