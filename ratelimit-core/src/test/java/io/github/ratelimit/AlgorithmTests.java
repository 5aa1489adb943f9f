package io.github.ratelimit;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link Algorithm}.
 */
class AlgorithmTests {

	@ParameterizedTest(name = "\"{0}\" is {1}")
	@CsvSource(delimiter = '|',
			value = { "token-bucket | TOKEN_BUCKET", "TOKEN_BUCKET | TOKEN_BUCKET", "Token-Bucket | TOKEN_BUCKET",
					"' gcra ' | GCRA", "sliding-window-counter | SLIDING_WINDOW_COUNTER",
					"Sliding_Window-Counter | SLIDING_WINDOW_COUNTER", "leaky_bucket | LEAKY_BUCKET",
					"FIXED-WINDOW | FIXED_WINDOW" })
	void fromStringAcceptsKebabSnakeAndMixedCase(String value, Algorithm expected) {
		assertThat(Algorithm.fromString(value)).isEqualTo(expected);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void fromStringReadsBackPropertyValueAndName(Algorithm algorithm) {
		assertThat(Algorithm.fromString(algorithm.propertyValue())).isEqualTo(algorithm);
		assertThat(Algorithm.fromString(algorithm.name())).isEqualTo(algorithm);
	}

	@ParameterizedTest(name = "\"{0}\"")
	@ValueSource(strings = { "bucket", "token bucket", "tokenbucket", "", "tb" })
	void fromStringRejectsUnknownNamesListingTheValidOnes(String value) {
		assertThatIllegalArgumentException().isThrownBy(() -> Algorithm.fromString(value))
			.withMessageContaining("'" + value + "'")
			.withMessageContaining("fixed-window, sliding-log, sliding-window, sliding-window-counter, "
					+ "token-bucket, leaky-bucket, gcra");
	}

	@Test
	void fromStringRejectsNull() {
		assertThatIllegalArgumentException().isThrownBy(() -> Algorithm.fromString(null)).withMessageContaining("null");
	}

	@Test
	void propertyValueIsKebabCase() {
		assertThat(Algorithm.TOKEN_BUCKET.propertyValue()).isEqualTo("token-bucket");
		assertThat(Algorithm.SLIDING_WINDOW_COUNTER.propertyValue()).isEqualTo("sliding-window-counter");
		assertThat(Algorithm.GCRA.propertyValue()).isEqualTo("gcra");
		assertThat(Arrays.stream(Algorithm.values()).map(Algorithm::propertyValue))
			.allMatch((value) -> value.matches("[a-z]+(-[a-z]+)*"));
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void onlyLeakyBucketRefusesRefunds(Algorithm algorithm) {
		assertThat(algorithm.supportsRefund()).isEqualTo(algorithm != Algorithm.LEAKY_BUCKET);
	}

	@Test
	void tokenBucketLeakyBucketAndGcraUseTheBurst() {
		Set<Algorithm> usingBurst = Arrays.stream(Algorithm.values())
			.filter(Algorithm::usesBurst)
			.collect(Collectors.toCollection(() -> EnumSet.noneOf(Algorithm.class)));
		assertThat(usingBurst).containsExactlyInAnyOrder(Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET,
				Algorithm.GCRA);
	}

	@Test
	void codesAreUniqueAndNonEmpty() {
		assertThat(Arrays.stream(Algorithm.values()).map(Algorithm::code)).doesNotHaveDuplicates()
			.allMatch((code) -> !code.isEmpty());
		assertThat(Algorithm.TOKEN_BUCKET.code()).isEqualTo("tb");
		assertThat(Algorithm.GCRA.code()).isEqualTo("gcra");
	}

}
