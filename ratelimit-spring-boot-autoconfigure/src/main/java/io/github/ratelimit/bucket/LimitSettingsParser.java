package io.github.ratelimit.bucket;

import java.util.Map;

/**
 * Reads the settings of a live override the way configuration is read: the same names
 * ({@code limit}, {@code window}, {@code limits[0].burst}, ...), the same conversions
 * ({@code 1m}, {@code sliding-log}) and the same error messages.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@FunctionalInterface
public interface LimitSettingsParser {

	/**
	 * Reads the settings of one bucket.
	 * @param bucket the bucket name
	 * @param fields the settings, by property name relative to
	 * {@code ratelimit.buckets.<bucket>}
	 * @return what they say
	 * @throws IllegalArgumentException naming the {@code ratelimit.buckets.<bucket>.*}
	 * property at fault, the value and what is expected
	 */
	BucketSettings parse(String bucket, Map<String, String> fields);

}
