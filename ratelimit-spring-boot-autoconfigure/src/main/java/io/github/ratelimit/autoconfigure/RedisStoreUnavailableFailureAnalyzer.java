package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.redis.RedisFailureCause;
import io.github.ratelimit.redis.RedisStoreUnavailableException;

/**
 * Reports a Redis the store cannot use for a reason waiting will not fix: the cause first
 * (authentication, ACL, TLS trust, unknown host, scripting refused), then the property
 * that made it fatal, and the fix.
 */
class RedisStoreUnavailableFailureAnalyzer extends ConfigurationFailureAnalyzer<RedisStoreUnavailableException> {

	@Override
	String description(RedisStoreUnavailableException cause) {
		return cause.getMessage() + (cause.isRequired()
				? " (ratelimit.store is 'redis'; the application does not start without the rate limit store's Redis)."
				: ".");
	}

	@Override
	String action(RedisStoreUnavailableException cause) {
		RedisFailureCause failure = cause.failureCause();
		return failure.fix() + (cause.isRequired()
				? " To start without Redis until it is fixed (each instance then enforces its share of every limit "
						+ "in memory, ratelimit.failure-mode=fallback), set ratelimit.store=auto."
				: "");
	}

}
