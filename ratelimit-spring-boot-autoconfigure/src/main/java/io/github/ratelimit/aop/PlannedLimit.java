package io.github.ratelimit.aop;

import java.util.List;

import io.github.ratelimit.LimitSpec;

/**
 * One operation of one call with its expressions evaluated: what to ask the store.
 *
 * @param operation the operation
 * @param key the key within the bucket
 * @param limits the limits (the bucket's, or per-call ones from {@code limitExpression})
 * @param cost the permits the call takes
 * @author ratelimit-spring-boot-starter authors
 */
record PlannedLimit(RateLimitedOperation operation, String key, List<LimitSpec> limits, long cost) {

}
