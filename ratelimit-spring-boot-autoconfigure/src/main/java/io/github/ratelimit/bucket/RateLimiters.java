package io.github.ratelimit.bucket;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.acquire.Acquirer;

/**
 * Hands out {@link RateLimiter}s for named buckets, for code that limits without the
 * annotation:
 *
 * <pre>{@code
 * if (rateLimiters.get("partner").tryAcquire(customerId).proceeds()) { ... }
 * }</pre>
 *
 * A bucket defined anywhere (a {@code @RateLimited} annotation, a filter rule,
 * {@code ratelimit.buckets.<name>}) is the same bucket here, with the same limits and
 * state; any other name gets its limits from configuration and the defaults. The limiters
 * take their permits through the application's {@link Acquirer}, so shadow mode, the
 * metrics and the endpoint's counts apply to them as to the annotation and the filter. A
 * limiter reads its bucket on every call, so a live change of the limits applies to
 * limiters already handed out.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimiters {

	private final BucketRegistry registry;

	private final Acquirer acquirer;

	private final Map<String, RateLimiter> limiters = new ConcurrentHashMap<>();

	/**
	 * Creates the factory.
	 * @param registry resolves bucket limits
	 * @param acquirer the application's acquirer
	 */
	public RateLimiters(BucketRegistry registry, Acquirer acquirer) {
		this.registry = Objects.requireNonNull(registry, "'registry' must not be null");
		this.acquirer = Objects.requireNonNull(acquirer, "'acquirer' must not be null");
	}

	/**
	 * Returns the limiter of a bucket, registering the bucket on first use when nothing
	 * else defined it.
	 * @param bucket the bucket name
	 * @return the limiter
	 * @throws BucketRegistry.InvalidBucketException when the bucket has no valid limit
	 */
	public RateLimiter get(String bucket) {
		return this.limiters.computeIfAbsent(bucket, (name) -> RateLimiter.of(this.acquirer,
				this.registry.use(name, "RateLimiters.get(\"" + name + "\")")::bucket));
	}

}
