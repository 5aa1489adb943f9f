package io.github.ratelimit.testsupport.tracing;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;

/**
 * Draws the spans a {@link SimpleTracer} recorded as a tree: each span on a line of its
 * own, indented under its parent, a rate limit span with its tags sorted by name (other
 * spans' tags name addresses and ports, which change from run to run). A span whose
 * parent is not among those drawn starts a tree of its own, so a span that lost its
 * parent shows as a second root.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class SpanTree {

	private SpanTree() {
	}

	/**
	 * Draws spans as trees, in the order their roots were started.
	 * @param spans the spans
	 * @return one line per span
	 */
	public static String draw(List<SimpleSpan> spans) {
		Set<String> ids = spans.stream().map((span) -> span.context().spanId()).collect(Collectors.toSet());
		StringBuilder tree = new StringBuilder();
		for (SimpleSpan span : spans) {
			String parent = span.context().parentId();
			if (parent == null || parent.isEmpty() || !ids.contains(parent)) {
				draw(span, spans, 0, tree);
			}
		}
		return tree.toString();
	}

	/**
	 * Returns a mark for {@link #drawSince}: spans the tracer records from now on come
	 * after it.
	 * @param tracer the tracer
	 * @return the mark
	 */
	public static int mark(SimpleTracer tracer) {
		return tracer.getSpans().size();
	}

	/**
	 * Draws the trees of the spans {@code tracer} recorded since {@code mark}, once one
	 * of them matches {@code awaited} and every one of them has ended: a server span ends
	 * after the response is written, which the client may read first. Spans of another
	 * trace are drawn too, as trees of their own, so a span that lost its parent shows.
	 * @param tracer the tracer
	 * @param mark what {@link #mark} returned before the spans were made
	 * @param awaited the span to wait for (e.g. the HTTP request's, by name)
	 * @param timeout how long to wait at most; after it, what there is is drawn
	 * @return one line per span
	 */
	public static String drawSince(SimpleTracer tracer, int mark, Predicate<SimpleSpan> awaited, Duration timeout) {
		Instant deadline = Instant.now().plus(timeout);
		while (true) {
			List<SimpleSpan> all = List.copyOf(tracer.getSpans());
			List<SimpleSpan> spans = all.subList(Math.min(mark, all.size()), all.size());
			boolean complete = spans.stream().anyMatch(awaited) && spans.stream().allMatch(SpanTree::ended);
			if (complete || Instant.now().isAfter(deadline)) {
				return draw(spans);
			}
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return draw(spans);
			}
		}
	}

	private static boolean ended(SimpleSpan span) {
		Instant end = span.getEndTimestamp();
		return end != null && !Instant.EPOCH.equals(end);
	}

	private static void draw(SimpleSpan span, List<SimpleSpan> spans, int depth, StringBuilder tree) {
		tree.append("  ".repeat(depth)).append(span.getName());
		if (span.getName().startsWith("ratelimit")) {
			tree.append(' ')
				.append(span.getTags()
					.entrySet()
					.stream()
					.sorted(Map.Entry.comparingByKey())
					.map((tag) -> tag.getKey() + "=" + tag.getValue())
					.collect(Collectors.joining(", ", "[", "]")));
		}
		tree.append('\n');
		for (SimpleSpan child : spans) {
			if (span.context().spanId().equals(child.context().parentId())) {
				draw(child, spans, depth + 1, tree);
			}
		}
	}

}
