package io.github.ratelimit.bucket;

import java.util.List;
import java.util.Objects;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;

/**
 * Reads one key's state without taking a permit, for everything that shows a key's state:
 * the {@code ratelimits} actuator endpoint (any key, for operators) and the status
 * endpoint (the caller's own keys). Both read through here, so they see a key the same
 * way, from the same store the decisions are made in (with Redis, its failure mode
 * included: while Redis fails, the state is the fallback's).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class KeyStateReader {

	private final RateLimitStore store;

	/**
	 * Creates the reader.
	 * @param store the store the decisions are made in
	 */
	public KeyStateReader(RateLimitStore store) {
		this.store = Objects.requireNonNull(store, "'store' must not be null");
	}

	/**
	 * Reads a key's state under some limits, taking nothing.
	 * @param bucket the bucket name
	 * @param key the key within the bucket; {@code ""} for one limit shared by every
	 * caller
	 * @param limits the limits, in the order the decisions pass them
	 * @return the state
	 * @throws RateLimitStoreException when the store cannot answer
	 */
	public KeyState read(String bucket, String key, List<LimitSpec> limits) {
		return new KeyState(limits, this.store.peek(bucket, key, limits));
	}

}
