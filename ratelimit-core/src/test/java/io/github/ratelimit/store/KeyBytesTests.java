package io.github.ratelimit.store;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link KeyBytes}: distinct strings give distinct bytes, and a valid string gives its
 * UTF-8 bytes.
 */
class KeyBytesTests {

	@Property(tries = 3000)
	void theBytesGiveTheStringBack(@ForAll("keys") String key) {
		// A decoding that restores every string proves that no two share their bytes.
		assertThat(decode(KeyBytes.of(key))).isEqualTo(key);
	}

	@Property(tries = 3000)
	void distinctStringsGiveDistinctBytes(@ForAll("keys") String a, @ForAll("keys") String b) {
		if (!a.equals(b)) {
			assertThat(KeyBytes.of(a)).isNotEqualTo(KeyBytes.of(b));
		}
	}

	@Property(tries = 3000)
	void aValidStringGivesItsUtf8Bytes(@ForAll("keys") String key) {
		String valid = withoutUnpairedSurrogates(key);
		assertThat(KeyBytes.of(valid)).isEqualTo(valid.getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void anUnpairedSurrogateIsEncodedLikeACodePointOfItsOwn() {
		assertThat(KeyBytes.of("a\uD800")).containsExactly(0x61, 0xED, 0xA0, 0x80);
		assertThat(KeyBytes.of("\uDFFF?")).containsExactly(0xED, 0xBF, 0xBF, 0x3F);
		assertThat(KeyBytes.of("\uDC00\uD800")).containsExactly(0xED, 0xB0, 0x80, 0xED, 0xA0, 0x80);
		assertThat(KeyBytes.of("é\uD83D\uDE00\uD83D")).containsExactly(0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80, 0xED, 0xA0,
				0xBD);
		assertThat(KeyBytes.of("a\uD800")).isNotEqualTo(KeyBytes.of("a?")).isNotEqualTo(KeyBytes.of("a\uFFFD"));
	}

	/**
	 * Strings of every char, with many surrogates (paired by chance or not), ASCII, and
	 * the characters stores treat specially.
	 */
	@Provide
	Arbitrary<String> keys() {
		Arbitrary<Character> surrogates = Arbitraries.chars().range('\uD800', '\uDFFF');
		Arbitrary<Character> ascii = Arbitraries.chars().range('\u0000', '\u007F');
		Arbitrary<Character> special = Arbitraries.of('?', '{', '}', '%', '#', ':', '\u0000', '\uFFFD', '\uDBFF',
				'\uDC00');
		Arbitrary<Character> any = Arbitraries.chars().all();
		return Arbitraries
			.frequencyOf(Tuple.of(3, surrogates), Tuple.of(3, ascii), Tuple.of(2, special), Tuple.of(2, any))
			.list()
			.ofMaxSize(200)
			.map(KeyBytesTests::join);
	}

	private static String join(List<Character> chars) {
		return chars.stream().map(String::valueOf).collect(Collectors.joining());
	}

	private static String withoutUnpairedSurrogates(String key) {
		StringBuilder valid = new StringBuilder();
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
				valid.append(c).append(key.charAt(++i));
			}
			else if (!Character.isSurrogate(c)) {
				valid.append(c);
			}
		}
		return valid.toString();
	}

	/** Generalized UTF-8 (WTF-8) decoded into UTF-16 code units. */
	private static String decode(byte[] bytes) {
		StringBuilder text = new StringBuilder();
		for (int i = 0; i < bytes.length;) {
			int b = bytes[i] & 0xFF;
			int length = (b < 0x80) ? 1 : (b < 0xE0) ? 2 : (b < 0xF0) ? 3 : 4;
			int codePoint = (length == 1) ? b : b & (0xFF >> (length + 1));
			for (int k = 1; k < length; k++) {
				codePoint = (codePoint << 6) | (bytes[i + k] & 0x3F);
			}
			text.appendCodePoint(codePoint);
			i += length;
		}
		return text.toString();
	}

}
