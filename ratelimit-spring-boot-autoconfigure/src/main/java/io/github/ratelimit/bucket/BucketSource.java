package io.github.ratelimit.bucket;

/**
 * Where a bucket's limits come from, as reported by the actuator endpoint.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum BucketSource {

	/** A {@code @RateLimited} annotation, with no {@code ratelimit.buckets} entry. */
	ANNOTATION,

	/** A {@code ratelimit.buckets.<name>} entry, which overrides any annotation. */
	CONFIGURATION,

	/** A {@code ratelimit.filter.rules} entry with no {@code ratelimit.buckets} entry. */
	FILTER,

	/** Code that registered the bucket directly. */
	PROGRAMMATIC,

	/**
	 * A live override set through the actuator endpoint, which overrides every other
	 * source until it is cleared.
	 */
	OVERRIDE

}
