package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.bucket.BucketRegistry.InvalidBucketException;

/**
 * Reports a bucket whose limits are invalid ({@code ratelimit.buckets.*},
 * {@code ratelimit.defaults.*}, a filter rule's or an annotation's limit attributes) or
 * defined twice with different limits.
 */
class InvalidBucketFailureAnalyzer extends ConfigurationFailureAnalyzer<InvalidBucketException> {

	@Override
	String action(InvalidBucketException cause) {
		return cause.getAction();
	}

}
