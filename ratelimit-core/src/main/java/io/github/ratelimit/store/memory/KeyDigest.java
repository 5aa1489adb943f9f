package io.github.ratelimit.store.memory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Replaces an over-long key by a fixed-size digest that cannot collide with a short key.
 */
final class KeyDigest {

	/** First character of every digest; raw keys starting with it are digested too. */
	static final char MARKER = '\0';

	private KeyDigest() {
	}

	static String digest(String key) {
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
			return MARKER + "sha256:" + HexFormat.of().formatHex(hash);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

}
