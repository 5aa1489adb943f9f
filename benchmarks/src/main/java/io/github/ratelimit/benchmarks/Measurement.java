package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One measured figure: the samples of one implementation in one variant of a comparison,
 * summarised as median, min and max. Every driver appends its measurements to one CSV
 * file, from which {@link Report} writes the table, the ratios and the picture.
 *
 * @param comparison the comparison, e.g. {@code redis-vs-bucket4j-lettuce-hot}
 * @param variant the variant within it, e.g. {@code c64}
 * @param impl {@code ours} or the peer's name
 * @param metric what was measured, e.g. {@code throughput}
 * @param unit the unit, e.g. {@code ops/s}
 * @param median the median sample
 * @param min the smallest sample
 * @param max the largest sample
 * @param samples the number of samples
 * @author ratelimit-spring-boot-starter authors
 */
record Measurement(String comparison, String variant, String impl, String metric, String unit, double median,
		double min, double max, int samples) {

	static final String HEADER = "comparison,variant,impl,metric,unit,median,min,max,samples";

	static Measurement of(String comparison, String variant, String impl, String metric, String unit,
			double[] samples) {
		double[] sorted = samples.clone();
		Arrays.sort(sorted);
		return new Measurement(comparison, variant, impl, metric, unit, median(sorted), sorted[0],
				sorted[sorted.length - 1], sorted.length);
	}

	static double median(double[] sorted) {
		int n = sorted.length;
		return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	}

	/**
	 * Returns the spread as a share of the median: {@code (max - min) / median}.
	 * @return the relative spread
	 */
	double spread() {
		return (this.median == 0) ? 0 : (this.max - this.min) / this.median;
	}

	String toCsv() {
		return String.join(",", this.comparison, this.variant, this.impl, this.metric, this.unit, format(this.median),
				format(this.min), format(this.max), Integer.toString(this.samples));
	}

	static Measurement fromCsv(String line) {
		String[] f = line.split(",", -1);
		return new Measurement(f[0], f[1], f[2], f[3], f[4], Double.parseDouble(f[5]), Double.parseDouble(f[6]),
				Double.parseDouble(f[7]), Integer.parseInt(f[8]));
	}

	static String format(double value) {
		return String.format(Locale.ROOT, "%.4f", value);
	}

	static void append(Path csv, List<Measurement> measurements) throws IOException {
		List<String> lines = new ArrayList<>();
		if (!Files.exists(csv)) {
			lines.add(HEADER);
		}
		for (Measurement measurement : measurements) {
			lines.add(measurement.toCsv());
			System.out.printf(Locale.ROOT, "  %-34s %-14s %-22s %-12s median %14.1f  min %14.1f  max %14.1f %s%n",
					measurement.comparison, measurement.variant, measurement.impl, measurement.metric,
					measurement.median, measurement.min, measurement.max, measurement.unit);
		}
		Files.write(csv, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
	}

	static List<Measurement> read(Path csv) throws IOException {
		List<Measurement> result = new ArrayList<>();
		for (String line : Files.readAllLines(csv, StandardCharsets.UTF_8)) {
			if (!line.isBlank() && !line.equals(HEADER)) {
				result.add(fromCsv(line));
			}
		}
		return result;
	}

}
