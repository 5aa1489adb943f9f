package io.github.ratelimit.store;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The bytes stores name a key by (to encode or digest it): distinct strings always give
 * distinct bytes. {@link String#getBytes String.getBytes(UTF_8)} does not: it turns an
 * unpaired surrogate, which UTF-8 cannot encode, into {@code ?}, so {@code "a\uD800"} and
 * {@code "a?"} would share a state. Here an unpaired surrogate is encoded as the three
 * bytes UTF-8 gives any other code point of the Basic Multilingual Plane (the encoding
 * known as WTF-8), and every valid string gives exactly its UTF-8 bytes, so the names of
 * existing keys do not change.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class KeyBytes {

	private KeyBytes() {
	}

	/**
	 * Returns the bytes of {@code key}: its UTF-8 encoding, with each unpaired surrogate
	 * encoded like a code point of its own.
	 * @param key the key, any string
	 * @return the bytes, distinct for distinct keys
	 */
	public static byte[] of(String key) {
		int first = firstUnpairedSurrogate(key);
		if (first < 0) {
			return key.getBytes(StandardCharsets.UTF_8);
		}
		// At most three bytes per char: a surrogate pair (two chars) takes four.
		byte[] bytes = new byte[3 * key.length()];
		byte[] valid = key.substring(0, first).getBytes(StandardCharsets.UTF_8);
		System.arraycopy(valid, 0, bytes, 0, valid.length);
		int length = valid.length;
		for (int i = first; i < key.length(); i++) {
			char c = key.charAt(i);
			if (c < 0x80) {
				bytes[length++] = (byte) c;
			}
			else if (c < 0x800) {
				bytes[length++] = (byte) (0xC0 | (c >> 6));
				bytes[length++] = (byte) (0x80 | (c & 0x3F));
			}
			else if (Character.isHighSurrogate(c) && i + 1 < key.length()
					&& Character.isLowSurrogate(key.charAt(i + 1))) {
				int codePoint = Character.toCodePoint(c, key.charAt(++i));
				bytes[length++] = (byte) (0xF0 | (codePoint >> 18));
				bytes[length++] = (byte) (0x80 | ((codePoint >> 12) & 0x3F));
				bytes[length++] = (byte) (0x80 | ((codePoint >> 6) & 0x3F));
				bytes[length++] = (byte) (0x80 | (codePoint & 0x3F));
			}
			else {
				// Any other char, an unpaired surrogate included.
				bytes[length++] = (byte) (0xE0 | (c >> 12));
				bytes[length++] = (byte) (0x80 | ((c >> 6) & 0x3F));
				bytes[length++] = (byte) (0x80 | (c & 0x3F));
			}
		}
		return Arrays.copyOf(bytes, length);
	}

	/** The index of the first surrogate without its pair, or -1 when there is none. */
	private static int firstUnpairedSurrogate(String key) {
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			if (Character.isSurrogate(c)) {
				if (Character.isHighSurrogate(c) && i + 1 < key.length()
						&& Character.isLowSurrogate(key.charAt(i + 1))) {
					i++;
				}
				else {
					return i;
				}
			}
		}
		return -1;
	}

}
