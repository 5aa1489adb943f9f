package io.github.ratelimit.store.memory;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import io.github.ratelimit.store.KeyBytes;

/**
 * Replaces an over-long key by a fixed-size digest that cannot collide with a short key,
 * nor with another long key: it digests the key's {@link KeyBytes}, which differ for
 * different keys (unpaired surrogates included).
 */
final class KeyDigest {

	/** First character of every digest; raw keys starting with it are digested too. */
	static final char MARKER = '\0';

	private KeyDigest() {
	}

	static String digest(String key) {
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(KeyBytes.of(key));
			return MARKER + "sha256:" + HexFormat.of().formatHex(hash);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

}
