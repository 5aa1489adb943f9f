package io.github.ratelimit.bucket;

import java.util.List;

import io.github.ratelimit.LimitSpec;

/**
 * What one user of a bucket needs of the bucket's limits, e.g. an annotated method with
 * {@code refundWhen}, which needs limits whose permits can be given back. A user
 * {@link BucketRegistry#constrain registers} it with the bucket: it is checked then, at
 * startup, and again for every live change of the bucket's limits, so that a change is
 * refused, with the same message, when startup would refuse the resulting configuration.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@FunctionalInterface
public interface BucketConstraint {

	/**
	 * Checks limits that the bucket has, or would have after a live change.
	 * @param limits the bucket's limits
	 * @throws IllegalStateException when the user cannot work with these limits; the
	 * message names the user, the limits and the fix
	 */
	void check(List<LimitSpec> limits);

}
