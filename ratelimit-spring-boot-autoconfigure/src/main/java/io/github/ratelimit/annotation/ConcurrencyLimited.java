package io.github.ratelimit.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits a Spring bean method (or every public method of a class) to {@code permits}
 * calls in flight per key, across every instance that shares the store.
 *
 * <pre>{@code
 * &#64;ConcurrencyLimited(bucket = "reports", key = "#tenant", permits = 5, lease = "30s")
 * public Report render(String tenant, ReportRequest request) { ... }
 * }</pre>
 *
 * A call takes a permit before it runs and gives it back when it returns or throws, or,
 * for a {@code CompletionStage}, {@code Mono} or {@code Flux}, when it completes, fails
 * or is cancelled; exactly once. A call with no permit free is rejected with a
 * {@link io.github.ratelimit.concurrency.ConcurrencyLimitExceededException} (429 in a web
 * application), or waits up to {@link #maxWait()} for one. While it runs its lease is
 * renewed; a permit whose instance died comes back after the lease.
 * {@code ratelimit.concurrency.<bucket>.permits} and {@code .lease} override what the
 * annotation sets. The key is SpEL with the method arguments by name and beans as
 * {@code @name}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ConcurrencyLimited {

	/**
	 * The bucket name: the unit of configuration, metrics and the actuator endpoint.
	 * @return the bucket
	 */
	String bucket();

	/**
	 * The key, as SpEL over the method's arguments; empty for one key for every call.
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * The calls a key may have in flight; {@code ratelimit.concurrency.<bucket>.permits}
	 * overrides it, and one of them must be set.
	 * @return the permits, or 0 when only configuration sets them
	 */
	int permits() default 0;

	/**
	 * How long a permit is held without a renewal, e.g. {@code 30s} (the default).
	 * @return the lease
	 */
	String lease() default "";

	/**
	 * How long a call waits for a permit before it is rejected, e.g. {@code 2s}; empty or
	 * {@code 0s} rejects at once.
	 * @return the longest wait
	 */
	String maxWait() default "";

}
