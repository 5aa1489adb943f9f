package io.github.ratelimit.clientip;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads the addresses a forwarded header lists, nearest hop first: the entries of
 * {@code X-Forwarded-For} (or of any header holding addresses separated by commas, such
 * as {@code X-Real-IP} with its one address), or the {@code for} parameters of the
 * elements of {@code Forwarded} (RFC 7239). Nothing here throws on a malformed value: an
 * entry that is not an address reads as {@code null}.
 * <p>
 * The header is split from the right: a proxy appends its entry to what the client sent,
 * so the entries the walk reads first are the trusted proxies' own, whatever the client
 * wrote to their left (an unclosed quote in a client's {@code Forwarded} value cannot
 * swallow them).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ForwardedHeader {

	/** The header of RFC 7239. */
	static final String FORWARDED = "Forwarded";

	private ForwardedHeader() {
	}

	/**
	 * Returns the entries of a header, nearest hop first.
	 * @param header the header's name, which decides its syntax
	 * @param values the header's values in the order the request has them (several header
	 * lines are one list, the first line leftmost)
	 * @return the entries, the rightmost first, each as written (see {@link #address})
	 */
	static List<String> entriesFromRight(String header, List<String> values) {
		if (values.isEmpty()) {
			return List.of();
		}
		String joined = (values.size() == 1) ? values.get(0) : String.join(",", values);
		if (!header.equalsIgnoreCase(FORWARDED)) {
			return splitFromRight(joined, ',', false);
		}
		List<String> elements = splitFromRight(joined, ',', true);
		List<String> entries = new ArrayList<>(elements.size());
		for (String element : elements) {
			entries.add(forParameter(element));
		}
		return entries;
	}

	/**
	 * Reads the address of an entry.
	 * @param entry an address, optionally in quotes, an IPv6 address in brackets, and
	 * either with a port ({@code 10.0.0.7:4711}, {@code "[2001:db8::1]:4711"}), real or
	 * obfuscated ({@code _p1})
	 * @return the address, or {@code null} for anything else: {@code unknown}, an
	 * obfuscated identifier ({@code _hidden}), a host name, garbage
	 */
	static @Nullable InetAddress address(String entry) {
		String node = entry.trim();
		if (node.length() >= 2 && node.charAt(0) == '"' && node.charAt(node.length() - 1) == '"') {
			node = node.substring(1, node.length() - 1).trim();
		}
		if (node.startsWith("[")) {
			int end = node.indexOf(']');
			if (end < 0 || !portOrNothing(node.substring(end + 1))) {
				return null;
			}
			String literal = node.substring(1, end);
			return (literal.indexOf(':') >= 0) ? IpAddresses.parse(literal) : null;
		}
		int colon = node.indexOf(':');
		if (colon >= 0 && colon == node.lastIndexOf(':')) {
			// One colon: an IPv4 address and a port (an IPv6 address has more).
			if (!portOrNothing(node.substring(colon))) {
				return null;
			}
			node = node.substring(0, colon);
		}
		return IpAddresses.parse(node);
	}

	/**
	 * Returns the {@code for} parameter of a {@code Forwarded} element, or {@code ""} (no
	 * address) when the hop did not say whom it forwarded for.
	 */
	private static String forParameter(String element) {
		for (String pair : splitFromRight(element, ';', true)) {
			int equals = pair.indexOf('=');
			if (equals > 0 && pair.substring(0, equals).trim().equalsIgnoreCase("for")) {
				return pair.substring(equals + 1);
			}
		}
		return "";
	}

	/**
	 * Whether the text after an address is empty or a port: {@code :} and up to five
	 * digits, or an obfuscated port ({@code :_} and letters, digits, {@code .},
	 * {@code _}, {@code -}; RFC 7239 section 6.3).
	 */
	private static boolean portOrNothing(String text) {
		if (text.isEmpty()) {
			return true;
		}
		if (text.length() < 2 || text.charAt(0) != ':') {
			return false;
		}
		if (text.charAt(1) == '_') {
			return text.length() > 2 && text.chars().skip(2).allMatch(ForwardedHeader::obfuscatedCharacter);
		}
		return text.length() <= 6 && text.chars().skip(1).allMatch((c) -> c >= '0' && c <= '9');
	}

	private static boolean obfuscatedCharacter(int c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
				|| c == '-';
	}

	/**
	 * Splits at a separator, from the right. With {@code quotes}, a separator inside a
	 * quoted string (RFC 7230, as {@code Forwarded} values use them) does not split: a
	 * quote with a backslash before it is part of the string.
	 */
	private static List<String> splitFromRight(String text, char separator, boolean quotes) {
		List<String> parts = new ArrayList<>();
		boolean quoted = false;
		int end = text.length();
		for (int i = text.length() - 1; i >= 0; i--) {
			char c = text.charAt(i);
			if (quotes && c == '"' && (i == 0 || text.charAt(i - 1) != '\\')) {
				quoted = !quoted;
			}
			else if (c == separator && !quoted) {
				parts.add(text.substring(i + 1, end));
				end = i;
			}
		}
		parts.add(text.substring(0, end));
		return parts;
	}

}
