package io.github.ratelimit.web;

import java.util.List;

/**
 * Builds an RFC 9457 problem document by hand. The body has a handful of fixed members,
 * so a few lines of escaping beat depending on a JSON library (which the application may
 * not have, or may have configured to write {@code ProblemDetail} differently).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ProblemJson {

	private final StringBuilder json = new StringBuilder(256).append('{');

	/**
	 * Adds a string member.
	 * @param name the member name
	 * @param value the value
	 * @return this builder
	 */
	ProblemJson string(String name, String value) {
		name(name);
		quote(value);
		return this;
	}

	/**
	 * Adds a number member.
	 * @param name the member name
	 * @param value the value
	 * @return this builder
	 */
	ProblemJson number(String name, long value) {
		name(name);
		this.json.append(value);
		return this;
	}

	/**
	 * Adds an array of strings.
	 * @param name the member name
	 * @param values the values
	 * @return this builder
	 */
	ProblemJson strings(String name, List<String> values) {
		name(name);
		this.json.append('[');
		for (int i = 0; i < values.size(); i++) {
			if (i > 0) {
				this.json.append(',');
			}
			quote(values.get(i));
		}
		this.json.append(']');
		return this;
	}

	/**
	 * Returns the document.
	 * @return the JSON text
	 */
	String build() {
		return this.json.toString() + '}';
	}

	private void name(String name) {
		if (this.json.length() > 1) {
			this.json.append(',');
		}
		quote(name);
		this.json.append(':');
	}

	private void quote(String value) {
		quote(this.json, value);
	}

	/**
	 * Writes a JSON string (RFC 8259 section 7): quotes, backslashes and control
	 * characters escaped, and U+2028/U+2029 too so the text is also safe inside
	 * JavaScript.
	 */
	static void quote(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20 || c == '\u2028' || c == '\u2029') {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

}
