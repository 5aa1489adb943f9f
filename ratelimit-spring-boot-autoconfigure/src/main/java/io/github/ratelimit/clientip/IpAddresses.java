package io.github.ratelimit.clientip;

import java.net.InetAddress;
import java.net.UnknownHostException;

import org.jspecify.annotations.Nullable;

/**
 * IP address literals, read without a name lookup and written in one form, so that an
 * address is one key however a server or a proxy wrote it: IPv4 in dotted decimal, IPv6
 * in the form of RFC 5952 (lower case, the longest run of zero groups as {@code ::}), an
 * IPv4-mapped IPv6 address ({@code ::ffff:10.0.0.7}) as the IPv4 address, and without
 * brackets or a zone id ({@code %eth0}).
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class IpAddresses {

	private static final int IPV6_GROUPS = 8;

	private IpAddresses() {
	}

	/**
	 * Reads an address literal.
	 * @param text an IPv4 address in dotted decimal (no leading zeros, which some readers
	 * take for octal), or an IPv6 address, optionally in brackets and with a zone id
	 * @return the address, or {@code null} when the text is not such a literal (a host
	 * name is never looked up)
	 */
	static @Nullable InetAddress parse(String text) {
		String literal = text;
		if (literal.length() > 2 && literal.charAt(0) == '[' && literal.charAt(literal.length() - 1) == ']') {
			literal = literal.substring(1, literal.length() - 1);
		}
		if (literal.indexOf(':') < 0) {
			byte[] ipv4 = ipv4(literal);
			return (ipv4 != null) ? byAddress(ipv4) : null;
		}
		int zone = literal.indexOf('%');
		if (zone >= 0) {
			literal = literal.substring(0, zone);
		}
		if (!ipv6Characters(literal)) {
			return null;
		}
		try {
			// In brackets the JDK takes the text for an IPv6 literal or fails: it never
			// looks the name up. It returns an IPv4-mapped address as the IPv4 address.
			return InetAddress.getByName("[" + literal + "]");
		}
		catch (UnknownHostException | IllegalArgumentException ex) {
			return null;
		}
	}

	/**
	 * Writes an address in the one form every key uses.
	 * @param address the address
	 * @return e.g. {@code 10.0.0.7} or {@code 2001:db8::1}
	 */
	static String format(InetAddress address) {
		return format(address.getAddress());
	}

	/**
	 * Writes an address given by its bytes in the one form every key uses.
	 * @param bytes 4 bytes of an IPv4 address, or 16 of an IPv6 address
	 * @return e.g. {@code 10.0.0.7} or {@code 2001:db8::1}
	 */
	static String format(byte[] bytes) {
		if (bytes.length == 4) {
			return ipv4Text(bytes, 0);
		}
		if (ipv4Mapped(bytes)) {
			return ipv4Text(bytes, 12);
		}
		return ipv6Text(bytes);
	}

	private static byte @Nullable [] ipv4(String text) {
		byte[] bytes = new byte[4];
		int part = 0;
		int value = 0;
		int digits = 0;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == '.') {
				if (digits == 0 || part == 3) {
					return null;
				}
				bytes[part++] = (byte) value;
				value = 0;
				digits = 0;
			}
			else if (c >= '0' && c <= '9') {
				if (digits == 1 && value == 0) {
					return null;
				}
				value = value * 10 + (c - '0');
				digits++;
				if (value > 255) {
					return null;
				}
			}
			else {
				return null;
			}
		}
		if (digits == 0 || part != 3) {
			return null;
		}
		bytes[3] = (byte) value;
		return bytes;
	}

	private static @Nullable InetAddress byAddress(byte[] bytes) {
		try {
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

	private static boolean ipv6Characters(String text) {
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (Character.digit(c, 16) < 0 && c != ':' && c != '.') {
				return false;
			}
		}
		return true;
	}

	private static boolean ipv4Mapped(byte[] bytes) {
		for (int i = 0; i < 10; i++) {
			if (bytes[i] != 0) {
				return false;
			}
		}
		return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
	}

	private static String ipv4Text(byte[] bytes, int from) {
		return (bytes[from] & 0xff) + "." + (bytes[from + 1] & 0xff) + "." + (bytes[from + 2] & 0xff) + "."
				+ (bytes[from + 3] & 0xff);
	}

	private static String ipv6Text(byte[] bytes) {
		int[] groups = new int[IPV6_GROUPS];
		for (int i = 0; i < IPV6_GROUPS; i++) {
			groups[i] = ((bytes[2 * i] & 0xff) << 8) | (bytes[2 * i + 1] & 0xff);
		}
		// RFC 5952: the longest run of two or more zero groups (the first of equal ones)
		// is written ::.
		int zerosStart = -1;
		int zerosLength = 1;
		for (int i = 0; i < IPV6_GROUPS; i++) {
			int start = i;
			while (i < IPV6_GROUPS && groups[i] == 0) {
				i++;
			}
			if (i - start > zerosLength) {
				zerosStart = start;
				zerosLength = i - start;
			}
		}
		StringBuilder text = new StringBuilder(39);
		for (int i = 0; i < IPV6_GROUPS; i++) {
			if (i == zerosStart) {
				text.append("::");
				i += zerosLength - 1;
				continue;
			}
			if (!text.isEmpty() && text.charAt(text.length() - 1) != ':') {
				text.append(':');
			}
			text.append(Integer.toHexString(groups[i]));
		}
		return text.toString();
	}

}
