package io.github.ratelimit.clientip;

import java.net.InetAddress;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * A range of IP addresses in CIDR notation ({@code 10.0.0.0/8}, {@code 2001:db8::/32}),
 * or one address ({@code 10.0.0.7}, {@code ::1}). An IPv4 range holds no IPv6 address and
 * the other way round, except that an IPv4-mapped IPv6 address is the IPv4 address (see
 * {@link IpAddresses}), written either way.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class AddressRange {

	private final byte[] network;

	private final int prefixLength;

	private AddressRange(byte[] network, int prefixLength) {
		this.network = network;
		this.prefixLength = prefixLength;
	}

	/**
	 * Reads a range.
	 * @param text an address, or an address and a prefix length, e.g. {@code 10.0.0.0/8};
	 * bits of the address past the prefix length are ignored
	 * @return the range
	 * @throws IllegalArgumentException saying what is wrong with the text
	 */
	public static AddressRange parse(String text) {
		String trimmed = text.trim();
		int slash = trimmed.indexOf('/');
		String literal = (slash >= 0) ? trimmed.substring(0, slash) : trimmed;
		InetAddress address = IpAddresses.parse(literal);
		if (address == null) {
			throw new IllegalArgumentException("'" + literal + "' is not an IP address");
		}
		byte[] bytes = address.getAddress();
		int bits = bytes.length * 8;
		int prefixLength = bits;
		if (slash >= 0) {
			String prefix = trimmed.substring(slash + 1);
			prefixLength = prefixLength(prefix, literal);
			if (bytes.length == 4 && literal.indexOf(':') >= 0) {
				// ::ffff:10.0.0.0/104 is 10.0.0.0/8.
				prefixLength -= 96;
				if (prefixLength < 0) {
					throw new IllegalArgumentException("the prefix length " + prefix + " of an IPv4-mapped range"
							+ " must be at least 96 (::ffff:0:0/96 is every IPv4 address)");
				}
			}
			if (prefixLength > bits) {
				throw new IllegalArgumentException("the prefix length " + prefixLength + " is more than the " + bits
						+ " bits of an IPv" + ((bits == 32) ? 4 : 6) + " address");
			}
		}
		return new AddressRange(mask(bytes, prefixLength), prefixLength);
	}

	/**
	 * Returns whether an address is in the range.
	 * @param address the address
	 * @return {@code true} when its first prefix-length bits are the range's
	 */
	public boolean contains(InetAddress address) {
		byte[] bytes = address.getAddress();
		if (bytes.length != this.network.length) {
			return false;
		}
		int whole = this.prefixLength / 8;
		for (int i = 0; i < whole; i++) {
			if (bytes[i] != this.network[i]) {
				return false;
			}
		}
		int rest = this.prefixLength % 8;
		return rest == 0 || (byte) (bytes[whole] & (0xff << (8 - rest))) == this.network[whole];
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof AddressRange range && range.prefixLength == this.prefixLength
				&& Arrays.equals(range.network, this.network);
	}

	@Override
	public int hashCode() {
		return 31 * Arrays.hashCode(this.network) + this.prefixLength;
	}

	@Override
	public String toString() {
		return IpAddresses.format(this.network) + "/" + this.prefixLength;
	}

	private static int prefixLength(String prefix, String literal) {
		if (prefix.isEmpty() || prefix.length() > 3 || !prefix.chars().allMatch((c) -> c >= '0' && c <= '9')) {
			throw new IllegalArgumentException(
					"the prefix length '" + prefix + "' after " + literal + "/ is not a number of bits");
		}
		return Integer.parseInt(prefix);
	}

	private static byte[] mask(byte[] bytes, int prefixLength) {
		byte[] masked = new byte[bytes.length];
		int whole = prefixLength / 8;
		System.arraycopy(bytes, 0, masked, 0, whole);
		int rest = prefixLength % 8;
		if (rest > 0) {
			masked[whole] = (byte) (bytes[whole] & (0xff << (8 - rest)));
		}
		return masked;
	}

}
