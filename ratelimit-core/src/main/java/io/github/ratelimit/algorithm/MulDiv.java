package io.github.ratelimit.algorithm;

/**
 * {@code floor(a * b / d)} and {@code a * b mod d}, exactly, where the product may pass
 * {@code 2^63}: the bucket algorithms multiply a count of permits (below {@code 2^53}) by
 * a part of a window (below {@code 2^51} µs), or a time by the limit, which reaches
 * {@code 2^106}. Nothing is allocated. For non-negative {@code a} and {@code b}, a
 * divisor {@code d} from 1 to {@code 2^55}, and a quotient below {@code 2^63}.
 */
final class MulDiv {

	private MulDiv() {
	}

	static long quotient(long a, long b, long d) {
		long high = Math.multiplyHigh(a, b);
		long low = a * b;
		if (high == 0 && low >= 0) {
			// A product below the divisor (one permit's share of a fraction, the usual
			// cost) needs no division, the slowest instruction on this path.
			return (low < d) ? 0 : low / d;
		}
		// The 128-bit product divided 8 bits at a time, as on paper: the remainder stays
		// below d, so shifting it left by 8 cannot overflow. high is below d, or the
		// quotient would not fit in a long.
		long remainder = high;
		long quotient = 0;
		for (int shift = 56; shift >= 0; shift -= 8) {
			remainder = (remainder << 8) | ((low >>> shift) & 0xFF);
			quotient = (quotient << 8) | (remainder / d);
			remainder %= d;
		}
		return quotient;
	}

	static long remainder(long a, long b, long d) {
		return remainder(a, b, d, quotient(a, b, d));
	}

	/**
	 * {@code a * b mod d} from the {@code quotient} already found, without dividing
	 * again.
	 */
	static long remainder(long a, long b, long d, long quotient) {
		// a * b - quotient * d is below d: the low 64 bits of the two products, which
		// wrap alike, give it exactly.
		return a * b - quotient * d;
	}

}
