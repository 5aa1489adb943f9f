package io.github.ratelimit.bucket;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Where live overrides of bucket limits are kept: in Redis, shared by every instance on
 * the same Redis and key prefix, or in this instance's memory. Overrides are stored as
 * text, one per bucket, and each instance reads them back as its own configuration; a
 * version that every write increments tells an instance whether to read them again.
 * <p>
 * A change is read, merged and checked by the caller, then saved with
 * {@link #compareAndSet compareAndSet}: only if the bucket's override is still the one
 * that was read, so that two changes made at the same time on two instances cannot
 * overwrite each other (the one saved second is read, merged and checked again).
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
	 * Returns one bucket's override as it is stored now.
	 * @param bucket the bucket name
	 * @return the override's text, or {@code null} when the bucket has none
	 * @throws RuntimeException when the store cannot answer
	 */
	@Nullable String read(String bucket);

	/**
	 * Sets or clears one bucket's override if it is still {@code expected}, and then
	 * increments the version, in one step. When the stored override is no longer
	 * {@code expected} (another change was saved since it was read), nothing changes, the
	 * version neither.
	 * @param bucket the bucket name
	 * @param expected the override's text as {@link #read read}, or {@code null} when the
	 * bucket had none
	 * @param override the new text, not empty, or {@code null} to clear the override
	 * @return whether the override was set or cleared
	 * @throws RuntimeException when the store cannot answer
	 */
	boolean compareAndSet(String bucket, @Nullable String expected, @Nullable String override);

	/**
	 * Returns whether other instances see the overrides ({@code true} for Redis), so that
	 * they must be polled for changes.
	 * @return whether the store is shared
	 */
	boolean shared();

}
