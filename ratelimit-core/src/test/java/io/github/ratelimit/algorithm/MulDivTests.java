package io.github.ratelimit.algorithm;

import java.math.BigInteger;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link MulDiv} against {@link BigInteger}, over the ranges the bucket algorithms use
 * (counts below 2^53, times below 2^51 µs, divisors below 2^53) and their edges.
 */
class MulDivTests {

	private static final long TWO_TO_53 = 1L << 53;

	@Property(tries = 5000)
	void quotientAndRemainderAreExact(@ForAll @LongRange(min = 0, max = TWO_TO_53) long a,
			@ForAll @LongRange(min = 0, max = 1L << 51) long b, @ForAll @LongRange(min = 1, max = TWO_TO_53) long d) {
		BigInteger[] expected = BigInteger.valueOf(a)
			.multiply(BigInteger.valueOf(b))
			.divideAndRemainder(BigInteger.valueOf(d));
		if (expected[0].bitLength() < 63) {
			assertThat(MulDiv.quotient(a, b, d)).isEqualTo(expected[0].longValueExact());
			assertThat(MulDiv.remainder(a, b, d)).isEqualTo(expected[1].longValueExact());
		}
	}

	@Property(tries = 5000)
	void aQuotientBelowTheCountIsExact(@ForAll @LongRange(min = 0, max = TWO_TO_53 - 1) long count,
			@ForAll @LongRange(min = 1, max = TWO_TO_53 - 1) long d, @ForAll @LongRange(min = 0) long seed) {
		// A remainder below the divisor: the bucket's count * (W mod L) / L.
		long remainder = Math.floorMod(seed, d);
		BigInteger[] expected = BigInteger.valueOf(count)
			.multiply(BigInteger.valueOf(remainder))
			.divideAndRemainder(BigInteger.valueOf(d));
		assertThat(MulDiv.quotient(count, remainder, d)).isEqualTo(expected[0].longValueExact());
		assertThat(MulDiv.remainder(count, remainder, d)).isEqualTo(expected[1].longValueExact());
	}

	@Test
	void productsAroundTwoToThe63() {
		long[][] cases = { { Long.MAX_VALUE, 1, 1 }, { 1L << 32, 1L << 31, 3 }, { 1L << 32, 1L << 32, (1L << 2) + 1 },
				{ TWO_TO_53 - 1, (1L << 51) - 1, TWO_TO_53 - 1 }, { TWO_TO_53 - 1, TWO_TO_53 - 2, TWO_TO_53 - 1 },
				{ 3_037_000_500L, 3_037_000_500L, 7 }, { TWO_TO_53, 1L << 51, 1L << 55 } };
		for (long[] c : cases) {
			BigInteger[] expected = BigInteger.valueOf(c[0])
				.multiply(BigInteger.valueOf(c[1]))
				.divideAndRemainder(BigInteger.valueOf(c[2]));
			assertThat(MulDiv.quotient(c[0], c[1], c[2])).as("%d * %d / %d", c[0], c[1], c[2])
				.isEqualTo(expected[0].longValueExact());
			assertThat(MulDiv.remainder(c[0], c[1], c[2])).as("%d * %d mod %d", c[0], c[1], c[2])
				.isEqualTo(expected[1].longValueExact());
		}
	}

}
