package io.github.ratelimit.redis;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RedisKeysTests {

	private final RedisKeys keys = new RedisKeys("rl");

	private final List<LimitSpec> limits = List.of(LimitSpec.of(10, "1s", Algorithm.TOKEN_BUCKET),
			LimitSpec.of(1000, "1h", Algorithm.FIXED_WINDOW),
			LimitSpec.builder().limit(5).window("1m").segments(6).algorithm(Algorithm.SLIDING_WINDOW_COUNTER).build());

	@Test
	void everyKeyOfADecisionSharesOneHashTagAndNamesTheShapeOfItsState() {
		assertThat(this.keys.keys("api", "1.2.3.4", this.limits)).containsExactly("rl:{api:1.2.3.4}:tb0",
				"rl:{api:1.2.3.4}:fw1:3600000000", "rl:{api:1.2.3.4}:swc2:60000000/6");
	}

	@Test
	void aChangeOfLimitOrBurstKeepsTheKeyAndAChangeOfWindowOrAlgorithmDoesNot() {
		LimitSpec window = LimitSpec.of(10, "1m", Algorithm.SLIDING_LOG);
		LimitSpec bucket = LimitSpec.of(10, "1m", Algorithm.GCRA);
		assertThat(key(window.toBuilder().limit(20).build())).isEqualTo(key(window));
		assertThat(key(window.toBuilder().window("2m").build())).isNotEqualTo(key(window));
		assertThat(key(window.toBuilder().algorithm(Algorithm.FIXED_WINDOW).build())).isNotEqualTo(key(window));
		assertThat(key(bucket.toBuilder().limit(20).window("2m").burst(5).build())).isEqualTo(key(bucket));
		assertThat(key(bucket.toBuilder().algorithm(Algorithm.TOKEN_BUCKET).build())).isNotEqualTo(key(bucket));
	}

	private String key(LimitSpec spec) {
		return this.keys.keys("b", "k", List.of(spec))[0];
	}

	@Test
	void bracesColonsSpacesAndControlCharactersArePercentEncoded() {
		assertThat(RedisKeys.encode("{a}")).isEqualTo("%7Ba%7D");
		assertThat(RedisKeys.encode("a:b c")).isEqualTo("a%3Ab%20c");
		assertThat(RedisKeys.encode("line\nbreak\u0000")).isEqualTo("line%0Abreak%00");
		assertThat(RedisKeys.encode("100%")).isEqualTo("100%25");
		assertThat(RedisKeys.encode("ü")).isEqualTo("%C3%BC");
		assertThat(RedisKeys.encode("#x")).isEqualTo("%23x");
	}

	@Test
	void safeShortKeysAreKeptAsTheyAre() {
		assertThat(RedisKeys.encode("user-42@example.com")).isEqualTo("user-42@example.com");
		assertThat(RedisKeys.encode("")).isEmpty();
	}

	@Test
	void longKeysAreHashedToABoundedLength() {
		String hashed = RedisKeys.encode("x".repeat(10_000));
		assertThat(hashed).startsWith("#").hasSizeLessThanOrEqualTo(RedisKeys.MAX_PART_LENGTH);
		assertThat(RedisKeys.encode("{".repeat(100))).startsWith("#").hasSize(44);
		assertThat(RedisKeys.encode("y".repeat(RedisKeys.MAX_PART_LENGTH))).hasSize(RedisKeys.MAX_PART_LENGTH);
		assertThat(RedisKeys.encode("y".repeat(RedisKeys.MAX_PART_LENGTH + 1))).startsWith("#");
	}

	@Test
	void differentBucketsAndKeysNeverShareAName() {
		List<String[]> pairs = List.of(new String[] { "a:b", "c" }, new String[] { "a", "b:c" },
				new String[] { "a", "b%3Ac" }, new String[] { "a", "x".repeat(200) },
				new String[] { "a", "x".repeat(200) + "y" }, new String[] { "a", "{b}" },
				new String[] { "a", "%7Bb%7D" }, new String[] { "a", "" }, new String[] { "a", " " });
		Set<String> names = new HashSet<>();
		for (String[] pair : pairs) {
			names.add(this.keys.keys(pair[0], pair[1], this.limits)[0]);
		}
		assertThat(names).hasSize(pairs.size());
	}

	@Test
	void aPrefixWithBracesIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RedisKeys("rl{x}")).withMessageContaining("rl{x}");
		assertThatIllegalArgumentException().isThrownBy(() -> new RedisKeys(""));
	}

}
