package io.github.ratelimit.benchmarks;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The picture shows each variant's paired ratio, and a busy one as not a result.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class ThroughputPictureTests {

	@Test
	void busyVariantIsDrawnGreyAndMarkedInvalid() {
		String comparison = "http-vs-bucket4j-starter-hot";
		List<Measurement> measurements = List.of(
				Measurement.of(comparison, "hot-c16", "ours", "throughput", "requests/s", new double[] { 600, 500 }),
				Measurement.of(comparison, "hot-c16", "bucket4j-starter", "throughput", "requests/s",
						new double[] { 100, 100 }),
				Measurement.of(comparison, "hot-c16", "bucket4j-starter", "pair-ratio", "ours/theirs",
						new double[] { 6, 5 }),
				Measurement.of(comparison, "hot-c16", "machine", "other-cpu", "cores", new double[] { 1, 1 }));
		String svg = ThroughputPicture.draw(Ratios.of(measurements, 0.2), "test machine");
		assertThat(svg).contains("5.50× INVALID (busy)").contains("#bbbbbb");
	}

}
