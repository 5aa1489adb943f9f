package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Turns the measurements of one run ({@code results/latest.csv}) into
 * {@code results/latest.md} (machine, goals, every figure with its spread), one
 * {@code RATIO <name> <value>} line per comparison on standard output, and
 * {@code docs/throughput.svg}.
 * <p>
 * A comparison's ratio is ours / theirs of the medians; where a comparison has several
 * variants (threads, keys, concurrency, outcome) the line quotes the lowest, and the
 * table shows each.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Report {

	/** Comparisons, in the order printed, with their goals. */
	private static final Map<String, Double> GOALS = new LinkedHashMap<>();

	static {
		GOALS.put("redis-vs-lettuce-evalsha-c64", 0.8);
		GOALS.put("redis-vs-bucket4j-lettuce-hot", 3.0);
		GOALS.put("redis-vs-bucket4j-lettuce-100k", Double.NaN);
		GOALS.put("redis-flood-local-rejections", 10.0);
		GOALS.put("memory-vs-bucket4j-local", 1.0);
		GOALS.put("memory-vs-resilience4j", 1.0);
		GOALS.put("http-overhead-memory", 0.95);
		GOALS.put("http-overhead-redis", Double.NaN);
	}

	private final List<Measurement> measurements;

	private Report(List<Measurement> measurements) {
		this.measurements = measurements;
	}

	static void main(Options options) throws IOException {
		Path csv = options.csv();
		Report report = new Report(Measurement.read(csv));
		List<Ratio> ratios = report.ratios();
		List<String> lines = new ArrayList<>();
		for (Ratio ratio : ratios) {
			if (ratio.headline) {
				lines.add(String.format(Locale.ROOT, "RATIO %s %.3f", ratio.comparison, ratio.value));
			}
		}
		for (Measurement m : report.select("http-overhead-memory", "http-overhead-redis")) {
			if (m.metric().equals("p99") && m.impl().equals("ours")) {
				lines.add(String.format(Locale.ROOT, "P99_ADDED_MS %s-%s %.3f", m.comparison(), m.variant(),
						report.p99Added(m)));
			}
		}
		for (Measurement m : report.select("redis-memory-per-key")) {
			lines.add(String.format(Locale.ROOT, "BYTES redis-memory-%s %.1f", m.variant(), m.median()));
		}
		Path markdown = csv.resolveSibling(csv.getFileName().toString().replaceFirst("\\.csv$", ".md"));
		Files.writeString(markdown, report.markdown(ratios, options), StandardCharsets.UTF_8);
		Path svg = Path.of(options.value("svg", "docs/throughput.svg"));
		Files.createDirectories(svg.toAbsolutePath().getParent());
		Files.writeString(svg, ThroughputPicture.draw(ratios, Machine.describe(options).oneLine()),
				StandardCharsets.UTF_8);
		lines.forEach(System.out::println);
	}

	private List<Measurement> select(String... comparisons) {
		List<Measurement> result = new ArrayList<>();
		for (Measurement m : this.measurements) {
			for (String comparison : comparisons) {
				if (m.comparison().equals(comparison)) {
					result.add(m);
				}
			}
		}
		return result;
	}

	private Optional<Measurement> find(String comparison, String variant, String impl, String metric) {
		return this.measurements.stream()
			.filter((m) -> m.comparison().equals(comparison) && m.variant().equals(variant) && m.impl().equals(impl)
					&& m.metric().equals(metric))
			.findFirst();
	}

	private double p99Added(Measurement ours) {
		return ours.median() - find(ours.comparison(), ours.variant(), "unlimited", "p99").orElseThrow().median();
	}

	/**
	 * Ours against the peer for every throughput variant, plus a headline (the lowest)
	 * per comparison.
	 */
	List<Ratio> ratios() {
		return ratios(this.measurements);
	}

	static List<Ratio> ratios(List<Measurement> measurements) {
		List<Ratio> ratios = new ArrayList<>();
		for (Map.Entry<String, Double> goal : GOALS.entrySet()) {
			String comparison = goal.getKey();
			List<Ratio> variants = new ArrayList<>();
			for (Measurement ours : measurements) {
				if (!ours.comparison().equals(comparison) || !ours.impl().equals("ours")
						|| !ours.metric().equals("throughput")) {
					continue;
				}
				if (comparison.startsWith("http-overhead") && ours.variant().equals("c1")) {
					// Throughput is compared under load; c1 is there for latency.
					continue;
				}
				for (Measurement theirs : measurements) {
					if (theirs.comparison().equals(comparison) && theirs.variant().equals(ours.variant())
							&& !theirs.impl().equals("ours") && theirs.metric().equals("throughput")) {
						variants.add(new Ratio(comparison, ours.variant(), theirs.impl(), ours, theirs,
								ours.median() / theirs.median(), goal.getValue(), false));
					}
				}
			}
			Ratio lowest = null;
			for (Ratio ratio : variants) {
				if (lowest == null || ratio.value < lowest.value) {
					lowest = ratio;
				}
			}
			if (lowest != null) {
				ratios.add(new Ratio(comparison, lowest.variant, lowest.peer, lowest.ours, lowest.theirs, lowest.value,
						lowest.goal, true));
			}
			ratios.addAll(variants);
		}
		return ratios;
	}

	private String markdown(List<Ratio> ratios, Options options) {
		Machine machine = Machine.describe(options);
		StringBuilder md = new StringBuilder();
		md.append("# Benchmark results\n\n");
		md.append("Written by `benchmarks/run.sh")
			.append(options.quick() ? " --quick" : "")
			.append("` on ")
			.append(machine.date())
			.append(". Every ratio is ours / theirs of the medians, measured in the same run on the same machine at ")
			.append("the same concurrency, trials alternating between the two sides.\n\n");
		md.append("## Machine\n\n| | |\n|---|---|\n");
		md.append("| CPU | ").append(machine.cpu()).append(" |\n");
		md.append("| cores | ").append(machine.cores()).append(" |\n");
		md.append("| memory | ").append(machine.memory()).append(" |\n");
		md.append("| OS | ").append(machine.os()).append(" |\n");
		md.append("| JDK | ").append(machine.jdk()).append(" |\n");
		md.append("| Redis | ").append(machine.redis()).append(" |\n");
		md.append("| load average at the end | ").append(machine.load()).append(" |\n\n");
		md.append("## Ratios\n\nThe headline of each comparison is its lowest variant.\n\n");
		md.append("| comparison | headline | goal | met | worst variant |\n|---|---|---|---|---|\n");
		for (Ratio ratio : ratios) {
			if (ratio.headline) {
				md.append(String.format(Locale.ROOT, "| `%s` | **%.2f** | %s | %s | %s vs %s |\n", ratio.comparison,
						ratio.value, Double.isNaN(ratio.goal) ? "—" : String.format(Locale.ROOT, ">= %.2f", ratio.goal),
						Double.isNaN(ratio.goal) ? "—" : (ratio.value >= ratio.goal) ? "yes" : "**no**", ratio.variant,
						ratio.peer));
			}
		}
		md.append("\n## Throughput, every variant\n\n");
		md.append("Median of the trials (spread = (max - min) / median, over n trials or JMH iterations).\n\n");
		md.append("| comparison | variant | ours | spread | peer | theirs | spread | n | ours / theirs |\n");
		md.append("|---|---|---|---|---|---|---|---|---|\n");
		for (Ratio ratio : ratios) {
			if (!ratio.headline) {
				md.append(String.format(Locale.ROOT, "| %s | %s | %s | %.0f%% | %s | %s | %.0f%% | %d | %.2f |\n",
						ratio.comparison, ratio.variant, human(ratio.ours.median(), ratio.ours.unit()),
						ratio.ours.spread() * 100, ratio.peer, human(ratio.theirs.median(), ratio.theirs.unit()),
						ratio.theirs.spread() * 100, ratio.ours.samples(), ratio.value));
			}
		}
		List<Measurement> commands = new ArrayList<>();
		for (Measurement m : this.measurements) {
			if (m.metric().equals("wire-commands")) {
				commands.add(m);
			}
		}
		if (!commands.isEmpty()) {
			md.append("\n## Redis work per decision\n\n");
			md.append("`wire`: commands the client sent (a Lettuce command listener); `redis`: commands Redis ran, ")
				.append("including those inside scripts (`INFO commandstats`); `cpu`: Redis server CPU time ")
				.append("(`INFO cpu`) per decision. Counted in a separate run per variant.\n\n");
			md.append("| comparison | variant | impl | wire | redis | Redis CPU µs |\n|---|---|---|---|---|---|\n");
			for (Measurement wire : commands) {
				double redis = find(wire.comparison(), wire.variant(), wire.impl(), "redis-commands")
					.map(Measurement::median)
					.orElse(Double.NaN);
				double cpu = find(wire.comparison(), wire.variant(), wire.impl(), "redis-cpu").map(Measurement::median)
					.orElse(Double.NaN);
				md.append(String.format(Locale.ROOT, "| %s | %s | %s | %.2f | %.2f | %.1f |\n", wire.comparison(),
						wire.variant(), wire.impl(), wire.median(), redis, cpu));
			}
		}
		List<Measurement> http = select("http-overhead-memory", "http-overhead-redis");
		if (!http.isEmpty()) {
			md.append("\n## HTTP latency\n\n");
			md.append("`/api/greeting` of the sample app, limited vs `--ratelimit.enabled=false`; medians over ")
				.append("the trials of each trial's percentile. Goal for memory: p99 added <= 1 ms.\n\n");
			md.append("| comparison | connections | limited p50 | unlimited p50 | limited p99 | unlimited p99 | ")
				.append("p99 added |\n|---|---|---|---|---|---|---|\n");
			for (Measurement m : http) {
				if (m.metric().equals("p99") && m.impl().equals("ours")) {
					double p50 = find(m.comparison(), m.variant(), "ours", "p50").orElseThrow().median();
					double basePercentile50 = find(m.comparison(), m.variant(), "unlimited", "p50").orElseThrow()
						.median();
					double base99 = find(m.comparison(), m.variant(), "unlimited", "p99").orElseThrow().median();
					md.append(String.format(Locale.ROOT,
							"| %s | %s | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %+.3f ms |\n", m.comparison(),
							m.variant().substring(1), p50, basePercentile50, m.median(), base99, m.median() - base99));
				}
			}
		}
		List<Measurement> memory = select("redis-memory-per-key");
		if (!memory.isEmpty()) {
			md.append("\n## Redis memory per key\n\n");
			md.append("100,000 keys `rl:{api:user-0000042}:<code>0`, 100 per hour, one decision each (`used_memory` ")
				.append("delta / keys). `floor-*`: bare `SET`s of one string per key, what Redis charges whatever ")
				.append("the algorithm: `floor-ttl` the same name, value `1` (a shared integer), `PX`; `-19-digits` ")
				.append("a 19-digit value (as GCRA and leaky bucket store); `floor-no-ttl` without expiry; ")
				.append("`-12-char-name` a shorter name. Goals: <= 100 B for fixed window, token bucket and GCRA; ")
				.append("sliding log <= 40 B per logged permit.\n\n");
			md.append("| algorithm | bytes |\n|---|---|\n");
			for (Measurement m : memory) {
				md.append(String.format(Locale.ROOT, "| %s | %.1f %s |\n", m.variant(), m.median(), m.unit()));
			}
		}
		md.append("\n## Raw\n\nEvery figure of this run: `latest.csv` beside this file.\n");
		return md.toString();
	}

	static String human(double value, String unit) {
		String u = unit.replace("decisions/s", "/s").replace("requests/s", "/s");
		if (value >= 1e6) {
			return String.format(Locale.ROOT, "%.2fM%s", value / 1e6, u);
		}
		if (value >= 1e3) {
			return String.format(Locale.ROOT, "%.1fk%s", value / 1e3, u);
		}
		return String.format(Locale.ROOT, "%.1f%s", value, u);
	}

	/**
	 * Ours against one peer in one variant.
	 */
	record Ratio(String comparison, String variant, String peer, Measurement ours, Measurement theirs, double value,
			double goal, boolean headline) {

	}

}
