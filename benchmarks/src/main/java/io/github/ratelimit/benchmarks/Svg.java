package io.github.ratelimit.benchmarks;

import java.util.Locale;

/**
 * A few SVG elements, enough for the two pictures.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Svg {

	private final StringBuilder body = new StringBuilder();

	private final int width;

	private final int height;

	Svg(int width, int height) {
		this.width = width;
		this.height = height;
	}

	Svg rect(double x, double y, double w, double h, String fill) {
		this.body.append(
				String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
						x, y, Math.max(0, w), Math.max(0, h), fill));
		return this;
	}

	Svg line(double x1, double y1, double x2, double y2, String stroke, double width, String dash) {
		this.body.append(String.format(Locale.ROOT,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n", x1,
				y1, x2, y2, stroke, width, dash.isEmpty() ? "" : " stroke-dasharray=\"" + dash + "\""));
		return this;
	}

	Svg circle(double cx, double cy, double r, String fill, String stroke) {
		this.body.append(String.format(Locale.ROOT,
				"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" stroke=\"%s\"/>\n", cx, cy, r, fill, stroke));
		return this;
	}

	Svg text(double x, double y, String text, int size, String anchor, String style) {
		this.body.append(String.format(Locale.ROOT,
				"<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s>%s</text>\n", x, y, size, anchor,
				style.isEmpty() ? "" : " " + style, escape(text)));
		return this;
	}

	static String escape(String text) {
		return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
	}

	@Override
	public String toString() {
		return String.format(Locale.ROOT,
				"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
						+ "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
						+ "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n%s</svg>\n",
				this.width, this.height, this.width, this.height, this.body);
	}

}
