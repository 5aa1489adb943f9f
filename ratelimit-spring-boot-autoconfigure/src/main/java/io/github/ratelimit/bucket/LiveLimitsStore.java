package io.github.ratelimit.bucket;

import java.util.Map;

/**
 * Where live overrides of bucket limits are kept: in Redis, shared by every instance on
 * the same Redis and key prefix, or in this instance's memory. Overrides are stored as
 * text, one per bucket, and each instance reads them back as its own configuration; a
 * version that every write increments tells an instance whether to read them again.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface LiveLimitsStore {

	/**
	 * Returns the version of the overrides: a number that every change increments.
	 * @return the version, {@code 0} before the first change
	 * @throws RuntimeException when the store cannot answer
	 */
	long version();

	/**
	 * Returns every override.
	 * @return the text of each override, by bucket name
	 * @throws RuntimeException when the store cannot answer
	 */
	Map<String, String> load();

	/**
	 * Sets one bucket's override, and increments the version.
	 * @param bucket the bucket name
	 * @param override the override's text
	 * @throws RuntimeException when the store cannot answer
	 */
	void save(String bucket, String override);

	/**
	 * Clears one bucket's override, and increments the version.
	 * @param bucket the bucket name
	 * @throws RuntimeException when the store cannot answer
	 */
	void remove(String bucket);

	/**
	 * Returns whether other instances see the overrides ({@code true} for Redis), so that
	 * they must be polled for changes.
	 * @return whether the store is shared
	 */
	boolean shared();

}
