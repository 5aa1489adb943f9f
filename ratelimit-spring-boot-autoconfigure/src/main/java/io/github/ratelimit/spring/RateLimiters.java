package io.github.ratelimit.spring;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Hands out {@link RateLimiter}s for named buckets on the application's store, for code
 * that limits without the annotation:
 *
 * <pre>{@code
 * Decision decision = rateLimiters.get("partner").tryAcquire(customerId);
 * }</pre>
 *
 * A bucket's limits come from {@code ratelimit.buckets.<name>} (or the defaults), like
 * any other bucket.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimiters {

	private final BucketRegistry registry;

	private final RateLimitStore store;

	private final Map<String, RateLimiter> limiters = new ConcurrentHashMap<>();

	/**
	 * Creates the factory.
	 * @param registry resolves bucket limits
	 * @param store the application's store
	 */
	public RateLimiters(BucketRegistry registry, RateLimitStore store) {
		this.registry = registry;
		this.store = store;
	}

	/**
	 * Returns the limiter of a bucket, registering the bucket on first use.
	 * @param bucket the bucket name
	 * @return the limiter
	 */
	public RateLimiter get(String bucket) {
		return this.limiters.computeIfAbsent(bucket, (name) -> {
			BucketDefinition definition = this.registry.register(name, LimitSettings.NONE, BucketSource.PROGRAMMATIC,
					"RateLimiters.get(\"" + name + "\")");
			RateLimiter.Builder builder = RateLimiter.builder(this.store).bucket(name);
			definition.limits().forEach(builder::limit);
			return builder.build();
		});
	}

}
