package io.github.ratelimit.benchmarks;

import java.util.List;
import java.util.Locale;

/**
 * {@code docs/throughput.svg}: one bar per comparison variant, ours / theirs on a log
 * scale around 1, the goal marked, the absolute figures written beside.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ThroughputPicture {

	private static final double MIN = 0.1;

	private static final double MAX = 100;

	private static final int LABEL = 300;

	private static final int PLOT = 420;

	private static final int ROW = 22;

	private ThroughputPicture() {
	}

	static String draw(List<Ratios.Ratio> ratios, String machine) {
		List<Ratios.Ratio> rows = ratios.stream().filter((r) -> !r.headline()).toList();
		long groups = rows.stream().map(Ratios.Ratio::comparison).distinct().count();
		int top = 86;
		int height = top + rows.size() * ROW + (int) groups * 26 + 50;
		int width = LABEL + PLOT + 330;
		Svg svg = new Svg(width, height);
		svg.text(20, 28, "Throughput, ours / theirs (same run, same machine, same concurrency)", 18, "start",
				"font-weight=\"bold\"");
		svg.text(20, 50, machine, 12, "start", "fill=\"#555\"");
		int plotBottom = height - 40;
		for (double tick : new double[] { 0.1, 0.25, 0.5, 1, 2, 4, 10, 25, 100 }) {
			double x = x(tick);
			svg.line(x, top - 6, x, plotBottom, (tick == 1) ? "#333" : "#ddd", (tick == 1) ? 1.5 : 1, "");
			svg.text(x, plotBottom + 16, format(tick) + "×", 11, "middle", "fill=\"#555\"");
		}
		svg.text(x(1) + 6, top - 10, "← theirs faster | ours faster →", 11, "middle", "fill=\"#555\"");
		double y = top;
		String group = "";
		for (Ratios.Ratio ratio : rows) {
			if (!ratio.comparison().equals(group)) {
				group = ratio.comparison();
				y += 20;
				svg.text(20, y, group, 13, "start", "font-weight=\"bold\"");
				if (!Double.isNaN(ratio.goal())) {
					svg.text(LABEL + PLOT + 10, y, String.format(Locale.ROOT, "goal ≥ %s×", format(ratio.goal())), 11,
							"start", "fill=\"#555\"");
				}
				y += 6;
			}
			double value = Math.max(MIN, Math.min(MAX, ratio.value()));
			boolean met = Double.isNaN(ratio.goal()) ? ratio.value() >= 1 : ratio.value() >= ratio.goal();
			double x0 = Math.min(x(1), x(value));
			svg.rect(x0, y + 4, Math.abs(x(value) - x(1)), ROW - 8,
					ratio.busy() ? "#bbbbbb" : met ? "#4c9a5b" : "#d9822b");
			Measurement pairs = ratio.pairs();
			if (pairs != null) {
				// The range of the per-round ratios.
				svg.line(x(pairs.min()), y + ROW / 2.0, x(pairs.max()), y + ROW / 2.0, "#222", 1, "");
			}
			if (!Double.isNaN(ratio.goal())) {
				svg.line(x(ratio.goal()), y + 1, x(ratio.goal()), y + ROW - 1, "#222", 2, "3,2");
			}
			svg.text(LABEL - 10, y + 15, ratio.variant() + "  vs " + ratio.peer(), 12, "end", "");
			svg.text(LABEL + PLOT + 10, y + 15, String.format(Locale.ROOT, "%.2f×%s   %s vs %s", ratio.value(),
					ratio.busy() ? " INVALID (busy)" : "", Report.human(ratio.ours().median(), ratio.ours().unit()),
					Report.human(ratio.theirs().median(), ratio.theirs().unit())), 12, "start", "");
			y += ROW;
		}
		svg.text(20, height - 8,
				"Bars: median of the per-round ratios ours / theirs, line: their range; grey: machine busy, "
						+ "not a result; dashed mark: goal. From "
						+ "benchmarks/results/latest.csv, drawn by benchmarks/run.sh.",
				11, "start", "fill=\"#555\"");
		return svg.toString();
	}

	private static double x(double ratio) {
		double clamped = Math.max(MIN, Math.min(MAX, ratio));
		return LABEL + (Math.log10(clamped) - Math.log10(MIN)) / (Math.log10(MAX) - Math.log10(MIN)) * PLOT;
	}

	private static String format(double value) {
		return (value == Math.rint(value)) ? Long.toString((long) value) : String.format(Locale.ROOT, "%.2g", value);
	}

}
