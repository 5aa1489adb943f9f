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
 * A comparison's ratio is the median of its per-round ratios ours / theirs; where a
 * comparison has several variants (threads, keys, concurrency, outcome) the line quotes
 * the lowest of those its goal is about ({@link Ratios}), and the table shows each.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Report {

	private final List<Measurement> measurements;

	private Report(List<Measurement> measurements) {
		this.measurements = measurements;
	}

	static void main(Options options) throws IOException {
		Path csv = options.csv();
		Report report = new Report(Measurement.read(csv));
		double busyCores = MachineLoad.busyCores(options);
		List<Ratios.Ratio> ratios = Ratios.of(report.measurements, busyCores);
		List<String> lines = new ArrayList<>();
		for (Ratios.Ratio ratio : ratios) {
			if (ratio.headline()) {
				lines.add(ratioLine(ratio, busyCores));
			}
		}
		for (Measurement m : report.select("http-overhead-memory", "http-overhead-redis",
				"http-vs-bucket4j-starter-hot", "http-vs-bucket4j-starter-100k")) {
			if (m.metric().equals("p99") && !m.impl().equals("unlimited")) {
				String peer = m.impl().equals("ours") ? "" : "-" + m.impl();
				lines.add(String.format(Locale.ROOT, "P99_ADDED_MS %s-%s%s %.3f", m.comparison(), m.variant(), peer,
						report.p99Added(m)));
			}
		}
		for (Measurement m : report.select("redis-memory-per-key")) {
			lines.add(String.format(Locale.ROOT, "BYTES redis-memory-%s %.1f", m.variant(), m.median()));
		}
		Path markdown = csv.resolveSibling(csv.getFileName().toString().replaceFirst("\\.csv$", ".md"));
		Files.writeString(markdown, report.markdown(ratios, options, busyCores), StandardCharsets.UTF_8);
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
		return Ratios.find(this.measurements, comparison, variant, impl, metric);
	}

	/**
	 * Returns the RATIO line of a headline: {@code RATIO <comparison> <median of the pair
	 * ratios> range <min>-<max> pairs <n> other-cpu <cores>}
	 * ({@code pairs <n> of <rounds>} when busy rounds were left out), then, where
	 * measured, {@code cross-core-ns <median> (<min>-<max>)}, or, when the machine was
	 * busy, {@code RATIO <comparison> <value> INVALID busy other-cpu <cores> > <limit>
	 * ...}: a figure not to be quoted.
	 */
	static String ratioLine(Ratios.Ratio ratio, double busyCores) {
		String pairs = (ratio.pairs() != null) ? String.format(Locale.ROOT, " range %.3f-%.3f pairs %d%s",
				ratio.pairs().min(), ratio.pairs().max(), ratio.pairs().samples(), ratio.ofRounds()) : " unpaired";
		double load = (ratio.load() != null) ? ratio.load().median() : Double.NaN;
		String busy = ratio.busy() ? String.format(Locale.ROOT,
				" INVALID busy (other processes used more than %.2f cores in at least half the pairs of a variant)",
				busyCores) : "";
		String crossCore = (ratio.crossCore() != null) ? String.format(Locale.ROOT, " cross-core-ns %.0f (%.0f-%.0f)",
				ratio.crossCore().median(), ratio.crossCore().min(), ratio.crossCore().max()) : "";
		return String.format(Locale.ROOT, "RATIO %s %.3f%s%s other-cpu %.2f%s", ratio.comparison(), ratio.value(), busy,
				pairs, load, crossCore);
	}

	private double p99Added(Measurement limited) {
		return limited.median()
				- find(limited.comparison(), limited.variant(), "unlimited", "p99").orElseThrow().median();
	}

	private String markdown(List<Ratios.Ratio> ratios, Options options, double busyCores) {
		Machine machine = Machine.describe(options);
		StringBuilder md = new StringBuilder();
		md.append("# Benchmark results\n\n");
		md.append("Written by `benchmarks/run.sh")
			.append(options.quick() ? " --quick" : "")
			.append("` on ")
			.append(machine.date())
			.append(". Every ratio is ours / theirs, measured in the same run on the same machine at the same ")
			.append("concurrency, in paired rounds alternating between the sides.\n\n");
		md.append("## Machine\n\n| | |\n|---|---|\n");
		md.append("| CPU | ").append(machine.cpu()).append(" |\n");
		md.append("| cores | ").append(machine.cores()).append(" |\n");
		md.append("| memory | ").append(machine.memory()).append(" |\n");
		md.append("| OS | ").append(machine.os()).append(" |\n");
		md.append("| JDK | ").append(machine.jdk()).append(" |\n");
		md.append("| Redis | ").append(machine.redis()).append(" |\n");
		md.append("| load average at the end | ").append(machine.load()).append(" |\n\n");
		md.append("## Ratios\n\n")
			.append("Each comparison runs in rounds of one trial per side, the order alternating between rounds ")
			.append("(A B, B A, ...); a ratio is the **median of the per-round ratios** ours / theirs, and its ")
			.append("range is the smallest and largest per-round ratio, over the rounds that were not busy (see ")
			.append("below; `N of M pairs` when some were left out). The headline of a comparison is the lowest ")
			.append("of the variants its goal is about (all but the in-memory 100,000-key variants, shown below: the ")
			.append("in-memory goals are about one key). `other CPU`: cores that processes outside the benchmark (not its JVMs, JMH forks, ")
			.append("redis-server or apps) kept busy during a round, from `/proc`: median over the rounds (largest). ")
			.append(String.format(Locale.ROOT,
					"A round is busy when they used more than %.2f cores; a variant is **INVALID** (busy) when at ",
					busyCores))
			.append("least half of its rounds were; a headline is invalid when any of the variants it is the lowest of is.\n\n");
		md.append("| comparison | headline | range | goal | met | worst variant | other CPU |\n")
			.append("|---|---|---|---|---|---|---|\n");
		for (Ratios.Ratio ratio : ratios) {
			if (ratio.headline()) {
				md.append(String.format(Locale.ROOT, "| `%s` | %s | %s | %s | %s | %s vs %s | %s |\n",
						ratio.comparison(), valueText(ratio), ratio.range(), goalText(ratio.goal()),
						ratio.busy() ? "—" : Double.isNaN(ratio.goal()) ? "—" : ratio.met() ? "yes" : "**no**",
						ratio.variant(), ratio.peer(), ratio.loadText()));
			}
		}
		md.append("\n## Throughput, every variant\n\n");
		md.append("Medians of the rounds (spread = (max - min) / median); `n` rounds (JMH: forks, each the median ")
			.append("of its iterations); `ours / theirs` the median of the per-round ratios, with their range.\n\n");
		md.append("| comparison | variant | ours | spread | peer | theirs | spread | n | ours / theirs | range | ")
			.append("other CPU |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
		for (Ratios.Ratio ratio : ratios) {
			if (!ratio.headline()) {
				md.append(
						String.format(Locale.ROOT, "| %s | %s | %s | %.0f%% | %s | %s | %.0f%% | %d | %s | %s | %s |\n",
								ratio.comparison(), ratio.variant(), human(ratio.ours().median(), ratio.ours().unit()),
								ratio.ours().spread() * 100, ratio.peer(),
								human(ratio.theirs().median(), ratio.theirs().unit()), ratio.theirs().spread() * 100,
								ratio.ours().samples(), valueText(ratio), ratio.range(), ratio.loadText()));
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
		List<Measurement> starter = select("http-vs-bucket4j-starter-hot", "http-vs-bucket4j-starter-100k");
		if (!starter.isEmpty()) {
			md.append("\n## HTTP: our starter vs bucket4j-spring-boot-starter\n\n");
			md.append("`GET /api/hello` of `benchmarks/http-app`, limited per `X-Api-Key` in Redis by our filter rule ")
				.append("and by bucket4j-spring-boot-starter's servlet filter, and with neither (`unlimited`, the ")
				.append("baseline of `p99 added`); medians over the rounds of each round's percentile.\n\n");
			md.append("| variant | ours p50 | theirs p50 | unlimited p50 | ours p99 | theirs p99 | unlimited p99 | ")
				.append("p99 added, ours | p99 added, theirs |\n|---|---|---|---|---|---|---|---|---|\n");
			for (Measurement m : starter) {
				if (m.metric().equals("p99") && m.impl().equals("ours")) {
					String[] impls = { "ours", "bucket4j-starter", "unlimited" };
					double[] p50 = new double[3];
					double[] p99 = new double[3];
					for (int i = 0; i < 3; i++) {
						p50[i] = find(m.comparison(), m.variant(), impls[i], "p50").map(Measurement::median)
							.orElse(Double.NaN);
						p99[i] = find(m.comparison(), m.variant(), impls[i], "p99").map(Measurement::median)
							.orElse(Double.NaN);
					}
					md.append(String.format(Locale.ROOT,
							"| %s | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %+.3f ms | %+.3f ms |\n",
							m.variant(), p50[0], p50[1], p50[2], p99[0], p99[1], p99[2], p99[0] - p99[2],
							p99[1] - p99[2]));
				}
			}
		}
		List<Measurement> load = new ArrayList<>();
		for (Measurement m : this.measurements) {
			// One row per phase: comparisons measured in the same rounds (the memory
			// ones, the two HTTP overheads) share their load figures.
			if (m.impl().equals("machine") && m.metric().equals("other-cpu")
					&& load.stream().noneMatch((l) -> sameRounds(l, m))) {
				load.add(m);
			}
		}
		if (!load.isEmpty()) {
			md.append("\n## Machine load during each phase\n\n");
			md.append("Per comparison variant, over its rounds: cores kept busy by processes outside the benchmark ")
				.append("(median, smallest, largest round) and the largest one-minute load average seen (which ")
				.append("counts the benchmark's own threads too); and the time a cache line took to cross ")
				.append("between the two cores and back, probed after each round (median, smallest–largest ")
				.append("round): on a virtual machine it follows where the host placed the vCPUs, which `/proc` ")
				.append("does not show, and anything two threads share on every call slows with it.\n\n");
			md.append("| comparison | variant | other CPU, median | min | max | load average, max | busy | ")
				.append("cross-core round trip |\n|---|---|---|---|---|---|---|---|\n");
			for (Measurement m : load) {
				double loadAverage = find(m.comparison(), m.variant(), "machine", "loadavg").map(Measurement::max)
					.orElse(Double.NaN);
				String crossCore = find(m.comparison(), m.variant(), "machine", "cross-core")
					.map((c) -> String.format(Locale.ROOT, "%.0f ns (%.0f–%.0f)", c.median(), c.min(), c.max()))
					.orElse("—");
				md.append(String.format(Locale.ROOT, "| %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %s |\n",
						m.comparison(), m.variant(), m.median(), m.min(), m.max(), loadAverage,
						(m.median() > busyCores) ? "**yes**" : "no", crossCore));
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

	private static boolean sameRounds(Measurement a, Measurement b) {
		return a.variant().equals(b.variant()) && a.median() == b.median() && a.min() == b.min() && a.max() == b.max();
	}

	private static String valueText(Ratios.Ratio ratio) {
		return ratio.busy() ? String.format(Locale.ROOT, "%.2f INVALID (busy)", ratio.value())
				: String.format(Locale.ROOT, "**%.2f**", ratio.value());
	}

	private static String goalText(double goal) {
		return Double.isNaN(goal) ? "—" : String.format(Locale.ROOT, ">= %.2f", goal);
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

}
