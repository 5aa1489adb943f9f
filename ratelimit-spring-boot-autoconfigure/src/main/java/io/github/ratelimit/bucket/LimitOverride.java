package io.github.ratelimit.bucket;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A live override of one bucket's limits, as set through the actuator endpoint: the
 * settings as they were written (property names relative to
 * {@code ratelimit.buckets.<name>}, e.g. {@code limit}, {@code window},
 * {@code limits[1].limit}), what they mean, who set them and when.
 *
 * @param fields the settings as written, in the order written
 * @param settings what they say, laid over the bucket's configuration field by field
 * @param changedBy who set the override: the authenticated principal, or
 * {@code anonymous}
 * @param changedAt when it was set
 * @author ratelimit-spring-boot-starter authors
 */
public record LimitOverride(Map<String, String> fields, BucketSettings settings, String changedBy, Instant changedAt) {

	/**
	 * Checks the override.
	 */
	public LimitOverride {
		fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
		Objects.requireNonNull(settings, "'settings' must not be null");
		Objects.requireNonNull(changedBy, "'changedBy' must not be null");
		Objects.requireNonNull(changedAt, "'changedAt' must not be null");
	}

}
