package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * {@code docs/algorithms.svg}: one bursty trace fed to all seven algorithms through the
 * real {@link InMemoryRateLimitStore} on a manual clock, one row per algorithm, admitted
 * requests above the line, rejected ones below. Leaky bucket rows show each admitted
 * request's delay as a line from its arrival to when it may proceed.
 * <p>
 * Limit: 10 per second (burst 10, 10 sub-windows). Trace: 2 per second (quiet), then 10
 * requests just before a window edge and 10 just after it, then 20 per second (twice the
 * limit) for four seconds.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class AlgorithmPictures {

	/** A whole second, so fixed windows start at 0 ms in the picture. */
	private static final long EPOCH_MICROS = 1_700_000_000_000_000L;

	/**
	 * The trace lasts 8 seconds; the picture shows one more, where delayed requests
	 * proceed.
	 */
	private static final long TRACE_MS = 8000;

	private static final long SPAN_MS = 9000;

	private static final LimitSpec.Builder SPEC = LimitSpec.builder().limit(10).window(Duration.ofSeconds(1));

	private static final int LEFT = 200;

	private static final int RIGHT = 200;

	private static final double PX_PER_MS = 0.15;

	private static final int ROW = 64;

	private AlgorithmPictures() {
	}

	static void main(Options options) throws IOException {
		long[] trace = trace();
		List<Row> rows = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			rows.add(run(algorithm, trace));
		}
		Path svg = Path.of(options.value("svg", "docs/algorithms.svg"));
		Files.createDirectories(svg.toAbsolutePath().getParent());
		Files.writeString(svg, draw(trace, rows), StandardCharsets.UTF_8);
		System.out.println("Wrote " + svg);
		for (Row row : rows) {
			System.out.printf(Locale.ROOT, "  %-24s admitted %3d of %d, most in any 1s: %d%n",
					row.algorithm.propertyValue(), row.admitted(), trace.length, row.maxPerSecond());
		}
	}

	/**
	 * Arrival times in ms: quiet, a burst across the window edge at 3s, steady overload.
	 */
	static long[] trace() {
		List<Long> times = new ArrayList<>();
		for (long t = 250; t < 2800; t += 500) {
			times.add(t);
		}
		for (int i = 0; i < 10; i++) {
			times.add(2800 + 20L * i);
		}
		for (int i = 0; i < 10; i++) {
			times.add(3000 + 20L * i);
		}
		for (long t = 4000; t < TRACE_MS; t += 50) {
			times.add(t);
		}
		return times.stream().mapToLong(Long::longValue).toArray();
	}

	static Row run(Algorithm algorithm, long[] trace) {
		AtomicLong now = new AtomicLong(EPOCH_MICROS);
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
			.timeSource(now::get)
			.executor(Runnable::run)
			.build();
		List<LimitSpec> limits = List.of(SPEC.algorithm(algorithm).build());
		boolean[] allowed = new boolean[trace.length];
		long[] delayMs = new long[trace.length];
		for (int i = 0; i < trace.length; i++) {
			now.set(EPOCH_MICROS + trace[i] * 1000);
			Decision decision = store.decide("picture", "client", limits, 1);
			allowed[i] = decision.allowed();
			delayMs[i] = decision.delayMicros() / 1000;
		}
		return new Row(algorithm, trace, allowed, delayMs);
	}

	private static String draw(long[] trace, List<Row> rows) {
		int top = 110;
		int width = LEFT + (int) (SPAN_MS * PX_PER_MS) + RIGHT;
		int height = top + ROW * (rows.size() + 1) + 60;
		Svg svg = new Svg(width, height);
		svg.text(20, 28, "The same bursty traffic through each algorithm: limit 10 per second (burst 10)", 18, "start",
				"font-weight=\"bold\"");
		svg.text(20, 48,
				"Each tick is one request: green above the line = admitted, red below = rejected. "
						+ "Leaky bucket: blue tick = when the admitted request proceeds, after its delay.",
				12, "start", "fill=\"#444\"");
		double plotTop = top - 30;
		double plotBottom = top + ROW * (rows.size() + 1) - 10;
		// Phases of the trace.
		shade(svg, 0, 2800, plotTop, plotBottom, "#f4f4f4", "quiet: 2 per second");
		shade(svg, 2800, 3200, plotTop, plotBottom, "#fdeedd", "burst: 10 + 10 across the edge at 3s");
		shade(svg, 4000, TRACE_MS, plotTop, plotBottom, "#fbe3e3", "steady overload: 20 per second (2× the limit)");
		for (long s = 0; s <= SPAN_MS; s += 1000) {
			double x = x(s);
			svg.line(x, plotTop + 16, x, plotBottom, "#bbb", 1, "4,3");
			svg.text(x, plotBottom + 16, (s / 1000) + "s", 11, "middle", "fill=\"#555\"");
		}
		svg.text(LEFT + (SPAN_MS * PX_PER_MS) / 2, plotBottom + 34,
				"time (dashed lines: fixed window boundaries, every second)", 11, "middle", "fill=\"#555\"");
		svg.text(width - RIGHT + 12, top - 16, "admitted", 11, "start", "fill=\"#555\"");
		svg.text(width - RIGHT + 90, top - 16, "most in any 1s", 11, "start", "fill=\"#555\"");
		// Offered load.
		double y = top;
		svg.text(LEFT - 12, y + 6, "offered", 13, "end", "font-weight=\"bold\"");
		svg.line(LEFT, y + 10, x(SPAN_MS), y + 10, "#999", 1, "");
		for (long t : trace) {
			svg.line(x(t), y + 10, x(t), y - 12, "#555", 1.2, "");
		}
		svg.text(width - RIGHT + 12, y + 6, Integer.toString(trace.length), 12, "start", "");
		for (Row row : rows) {
			y += ROW;
			drawRow(svg, row, y, width);
		}
		return svg.toString();
	}

	private static void drawRow(Svg svg, Row row, double y, int width) {
		svg.text(LEFT - 12, y + 2, row.algorithm.propertyValue(), 13, "end", "font-weight=\"bold\"");
		svg.text(LEFT - 12, y + 17, describe(row.algorithm), 10, "end", "fill=\"#666\"");
		svg.line(LEFT, y, x(SPAN_MS), y, "#999", 1, "");
		for (int i = 0; i < row.trace.length; i++) {
			double x = x(row.trace[i]);
			if (row.allowed[i]) {
				svg.line(x, y, x, y - 18, "#2f8f46", 1.6, "");
				if (row.algorithm == Algorithm.LEAKY_BUCKET) {
					// When the request proceeds, after its delay: a smooth stream.
					double proceed = x(row.trace[i] + row.delayMs[i]);
					svg.line(proceed, y - 22, proceed, y - 34, "#2b6cb0", 1.6, "");
				}
			}
			else {
				svg.line(x, y, x, y + 14, "#d04545", 1.6, "");
			}
		}
		svg.text(width - RIGHT + 12, y + 2, Integer.toString(row.admitted()), 12, "start", "");
		svg.text(width - RIGHT + 90, y + 2, Integer.toString(row.maxPerSecond()), 12, "start", "");
	}

	private static String describe(Algorithm algorithm) {
		switch (algorithm) {
			case FIXED_WINDOW:
				return "count per aligned window";
			case SLIDING_LOG:
				return "exact log of admissions";
			case SLIDING_WINDOW:
				return "weighted two-window estimate";
			case SLIDING_WINDOW_COUNTER:
				return "10 sub-window counters";
			case TOKEN_BUCKET:
				return "refill 1 per 100ms, burst 10";
			case LEAKY_BUCKET:
				return "queue drains 1 per 100ms";
			case GCRA:
				return "= token bucket, one number";
			default:
				return "";
		}
	}

	private static void shade(Svg svg, long from, long to, double top, double bottom, String fill, String label) {
		svg.rect(x(from), top, x(to) - x(from), bottom - top, fill);
		svg.text((x(from) + x(to)) / 2, top + 12, label, 11, "middle", "fill=\"#444\"");
	}

	private static double x(long ms) {
		return LEFT + ms * PX_PER_MS;
	}

	/**
	 * What one algorithm did with the trace.
	 */
	record Row(Algorithm algorithm, long[] trace, boolean[] allowed, long[] delayMs) {

		int admitted() {
			int n = 0;
			for (boolean a : this.allowed) {
				n += a ? 1 : 0;
			}
			return n;
		}

		/**
		 * The most requests that proceed (arrival plus delay) within any one second.
		 */
		int maxPerSecond() {
			long[] proceed = new long[admitted()];
			int n = 0;
			for (int i = 0; i < this.trace.length; i++) {
				if (this.allowed[i]) {
					proceed[n++] = this.trace[i] + this.delayMs[i];
				}
			}
			Arrays.sort(proceed);
			int max = 0;
			int start = 0;
			for (int end = 0; end < proceed.length; end++) {
				while (proceed[end] - proceed[start] >= 1000) {
					start++;
				}
				max = Math.max(max, end - start + 1);
			}
			return max;
		}

	}

}
