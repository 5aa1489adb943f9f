package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Pattern;

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
				"rl:{api:1.2.3.4}:fw1:3600000000", "rl:{api:1.2.3.4}:swc2:60000000/6", "rl:{api:1.2.3.4}:tb0:d",
				"rl:{api:1.2.3.4}:fw1:3600000000:d", "rl:{api:1.2.3.4}:swc2:60000000/6:d");
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

	@Test
	void aCalendarWindowsKeyNamesItsUnitAndZone() {
		LimitSpec month = LimitSpec.builder()
			.limit(100_000)
			.calendar("month")
			.zone("Europe/Berlin")
			.algorithm(Algorithm.FIXED_WINDOW)
			.build();
		assertThat(this.keys.keys("monthly", "k1", List.of(month)))
			.containsExactly("rl:{monthly:k1}:fw0:month@Europe/Berlin", "rl:{monthly:k1}:fw0:month@Europe/Berlin:d");
		assertThat(key(month.toBuilder().zone("UTC").build())).isEqualTo("rl:{b:k}:fw0:month@UTC");
		assertThat(key(month.toBuilder().calendar("day").build())).isNotEqualTo(key(month));
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
	void anUnpairedSurrogateIsEncodedAsItsOwnBytes() {
		assertThat(RedisKeys.encode("a\uD800")).isEqualTo("a%ED%A0%80");
		assertThat(RedisKeys.encode("a?")).isEqualTo("a?");
		assertThat(RedisKeys.encode("a\uDC00" + "y".repeat(200)))
			.isEqualTo("#z3pQXdSDUyiz1c1DSzCFGjyxVjgvVjzOaQsrqxM27ok");
		assertThat(this.keys.keys("b\uDBFF", "a\uD800", this.limits))
			.doesNotContainAnyElementsOf(List.of(this.keys.keys("b?", "a?", this.limits)));
	}

	@Test
	void existingNamesDoNotChange() {
		assertThat(RedisKeys.encode("ünïcödé ✓")).isEqualTo("%C3%BCn%C3%AFc%C3%B6d%C3%A9%20%E2%9C%93");
		assertThat(RedisKeys.encode("\uD83D\uDE00")).isEqualTo("%F0%9F%98%80");
		assertThat(RedisKeys.encode("x".repeat(10_000))).isEqualTo("#5O6X7CUnSdIJZEfoSWKNDXc09RcAQW7vuzNXS_Cz7nU");
		assertThat(RedisKeys.encode("{".repeat(100))).isEqualTo("#GBMZTlhUeOmwAKHZW2nVl_xH1r5ka1DuMhh73X4JyR8");
		Random random = new Random(11);
		for (int i = 0; i < 20_000; i++) {
			String part = withoutUnpairedSurrogates(randomPart(random));
			assertThat(RedisKeys.encode(part)).as("part %d of %d chars", i, part.length())
				.isEqualTo(utf8Encoding(part));
		}
	}

	/**
	 * Arbitrary strings (lone surrogates, braces, {@code %}, control characters, long
	 * ones), and each of them with its unpaired surrogates replaced by what UTF-8
	 * encoders write instead: no two distinct strings share an encoding, and no encoding
	 * holds a brace, a colon, a space, a control or a non-ASCII character.
	 */
	@Test
	void distinctPartsNeverShareAnEncoding() {
		Pattern printable = Pattern.compile("[\\x21-\\x7E&&[^{}:]]*");
		Random random = new Random(7);
		Map<String, String> partByEncoding = new HashMap<>();
		for (int i = 0; i < 20_000; i++) {
			String part = randomPart(random);
			for (String variant : List.of(part, part.replaceAll("\\p{Cs}", "?"), part.replaceAll("\\p{Cs}", "\uFFFD"),
					withoutUnpairedSurrogates(part))) {
				String encoded = RedisKeys.encode(variant);
				String earlier = partByEncoding.putIfAbsent(encoded, variant);
				assertThat(earlier).as("the part sharing the encoding %s", encoded).isIn(null, variant);
				assertThat(encoded).matches(printable);
			}
		}
		assertThat(partByEncoding).hasSizeGreaterThan(20_000);
	}

	/**
	 * A string of up to 40 chars, or sometimes up to 300, drawn from surrogates, ASCII
	 * (controls and braces included), the characters the encoding treats specially, and
	 * any char.
	 */
	private static String randomPart(Random random) {
		int length = (random.nextInt(10) == 0) ? random.nextInt(300) : random.nextInt(40);
		StringBuilder part = new StringBuilder(length);
		String special = "?{}%#:\u0000\uFFFD\uD800\uDBFF\uDC00\uDFFF";
		for (int i = 0; i < length; i++) {
			part.append(switch (random.nextInt(4)) {
				case 0 -> (char) (0xD800 + random.nextInt(0x800));
				case 1 -> (char) random.nextInt(0x80);
				case 2 -> special.charAt(random.nextInt(special.length()));
				default -> (char) random.nextInt(0x10000);
			});
		}
		return part.toString();
	}

	private static String withoutUnpairedSurrogates(String part) {
		StringBuilder valid = new StringBuilder();
		for (int i = 0; i < part.length(); i++) {
			char c = part.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < part.length() && Character.isLowSurrogate(part.charAt(i + 1))) {
				valid.append(c).append(part.charAt(++i));
			}
			else if (!Character.isSurrogate(c)) {
				valid.append(c);
			}
		}
		return valid.toString();
	}

	/**
	 * The encoding of a valid string before unpaired surrogates had bytes of their own.
	 */
	private static String utf8Encoding(String part) {
		String safe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~@/=+!*'(),;$&[]|^<>?";
		byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
		StringBuilder encoded = new StringBuilder();
		for (byte b : bytes) {
			int c = b & 0xFF;
			encoded.append((c < 128 && safe.indexOf(c) >= 0) ? String.valueOf((char) c) : String.format("%%%02X", c));
		}
		if (bytes.length <= RedisKeys.MAX_PART_LENGTH && encoded.length() <= RedisKeys.MAX_PART_LENGTH) {
			return encoded.toString();
		}
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(bytes);
			return "#" + Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void aPrefixWithBracesIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RedisKeys("rl{x}")).withMessageContaining("rl{x}");
		assertThatIllegalArgumentException().isThrownBy(() -> new RedisKeys(""));
	}

}
