package io.github.ratelimit.redis;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.algorithm.LimitState;
import io.github.ratelimit.store.KeyBytes;

/**
 * Builds the Redis keys of one decision: {@code <prefix>:{<bucket>:<key>}:<code><i>},
 * followed for the window algorithms by {@code :<window µs>} and for the sliding window
 * counter by {@code :<window µs>/<segments>}: a limit whose algorithm, window or segments
 * changes keeps its state under a key of its own, which the in-memory store mirrors (see
 * {@code LimitState.sameShape}).
 * <p>
 * The braces are a Redis Cluster hash tag: every key of one decision hashes to the same
 * slot, so the script runs unchanged on a cluster. User-supplied parts never reach Redis
 * raw: the bytes of a part ({@link KeyBytes}: UTF-8, with an unpaired surrogate encoded
 * like any other code point rather than as {@code ?}) outside a safe ASCII set (braces,
 * {@code :}, {@code %}, spaces, control characters, non-ASCII) are percent-encoded, which
 * is injective, and a part whose encoding is longer than {@value #MAX_PART_LENGTH} bytes
 * is replaced by {@code #} and the SHA-256 digest of its bytes ({@code #} is always
 * encoded in raw parts, so a digest never equals a raw part). Distinct parts get distinct
 * names.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisKeys {

	/** Longest encoded bucket or key part stored as is. */
	public static final int MAX_PART_LENGTH = 128;

	private static final boolean[] SAFE = new boolean[128];

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

	static {
		String safe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~@/=+!*'(),;$&[]|^<>?";
		for (int i = 0; i < safe.length(); i++) {
			SAFE[safe.charAt(i)] = true;
		}
	}

	private final String prefix;

	/**
	 * Creates keys under {@code prefix}.
	 * @param prefix the key prefix, e.g. {@code rl}
	 */
	public RedisKeys(String prefix) {
		if (prefix == null || prefix.isEmpty()) {
			throw new IllegalArgumentException("key prefix must not be empty");
		}
		if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
			throw new IllegalArgumentException("key prefix must not contain braces but was '" + prefix + "'");
		}
		this.prefix = prefix;
	}

	/**
	 * Returns the keys of one decision: one per limit; then each limit's key followed by
	 * {@code :d}, which holds the end of a debt; then, for each limit with a
	 * {@link LimitSpec#penalty() penalty} in the limits' order, that limit's key followed
	 * by {@code :p}, which holds the end of a block.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limits the limits
	 * @return the Redis keys
	 */
	public String[] keys(String bucket, String key, List<LimitSpec> limits) {
		String base = this.prefix + ":{" + encode(bucket) + ":" + encode(key) + "}:";
		int count = limits.size();
		int penalties = 0;
		for (LimitSpec spec : limits) {
			penalties += (spec.penaltyMicros() > 0) ? 1 : 0;
		}
		String[] keys = new String[2 * count + penalties];
		int penalty = 2 * count;
		for (int i = 0; i < count; i++) {
			LimitSpec spec = limits.get(i);
			String name = base + spec.algorithm().code() + i;
			long window = LimitState.shapeWindow(spec);
			int segments = LimitState.shapeSegments(spec);
			if (spec.calendar() != null) {
				name = name + ":" + spec.calendar().propertyValue() + "@" + encode(spec.zone().getId());
			}
			else if (segments > 0) {
				name = name + ":" + window + "/" + segments;
			}
			else if (window > 0) {
				name = name + ":" + window;
			}
			keys[i] = name;
			keys[count + i] = name + ":d";
			if (spec.penaltyMicros() > 0) {
				keys[penalty++] = name + ":p";
			}
		}
		return keys;
	}

	/**
	 * Returns the key of a concurrency limit's permits:
	 * {@code <prefix>:{<bucket>:<key>}:cc}, in the slot of the key's rate limits.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return the Redis key
	 */
	public String concurrencyKey(String bucket, String key) {
		return this.prefix + ":{" + encode(bucket) + ":" + encode(key) + "}:cc";
	}

	/**
	 * Returns the keys of the heartbeat that instances sharing this prefix run (see the
	 * header of {@code rate_limit.lua}): the instances, the live limits' version, the
	 * epoch and the resets, all under the hash tag {@code {<prefix>}}, so one call
	 * touches one Redis Cluster slot.
	 * @return the keys, in the order the script reads them
	 */
	public String[] fleetKeys() {
		String base = "{" + this.prefix + "}:";
		return new String[] { base + "instances", base + "live-limits:version", base + "epoch", base + "resets" };
	}

	/**
	 * Encodes one user-supplied part: as is when safe and short, percent-encoded when it
	 * holds unsafe characters, hashed when the encoding is too long.
	 * @param part the bucket or key
	 * @return the encoded part
	 */
	public static String encode(String part) {
		if (part.length() <= MAX_PART_LENGTH && isSafe(part)) {
			return part;
		}
		byte[] bytes = KeyBytes.of(part);
		if (bytes.length > MAX_PART_LENGTH) {
			return digest(bytes);
		}
		StringBuilder encoded = new StringBuilder(bytes.length * 3);
		for (byte b : bytes) {
			int c = b & 0xFF;
			if (c < 128 && SAFE[c]) {
				encoded.append((char) c);
			}
			else {
				encoded.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
			}
		}
		return (encoded.length() > MAX_PART_LENGTH) ? digest(bytes) : encoded.toString();
	}

	private static boolean isSafe(String part) {
		for (int i = 0; i < part.length(); i++) {
			char c = part.charAt(i);
			if (c >= 128 || !SAFE[c]) {
				return false;
			}
		}
		return true;
	}

	private static String digest(byte[] bytes) {
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(bytes);
			return "#" + Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

}
