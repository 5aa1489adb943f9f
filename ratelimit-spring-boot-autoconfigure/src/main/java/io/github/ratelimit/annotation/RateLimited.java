package io.github.ratelimit.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.github.ratelimit.Algorithm;

/**
 * Rate-limits a Spring bean method, or every public method of a class.
 *
 * <pre>{@code
 * &#64;RateLimited(bucket = "login", key = "#username", limit = 5, window = "1m",
 *              algorithm = Algorithm.SLIDING_LOG, refundWhen = "#result.successful")
 * public Session login(String username, String password) { ... }
 * }</pre>
 *
 * What the annotation sets is the code's default: {@code ratelimit.buckets.<bucket>.*} in
 * configuration overrides it, and {@code ratelimit.defaults.*} fills what neither sets.
 * Expressions are SpEL, parsed once at startup, with the method arguments by name,
 * {@code #args}, {@code #method}, {@code #target}, {@code #request}, {@code #clientIp}
 * (the client's address, as filter rules see it, see {@code ratelimit.client-ip}),
 * {@code #principal} and beans as {@code @name}. Repeat the annotation to apply several
 * buckets; a call then passes only if every bucket allows it, and permits taken from the
 * others are given back when one rejects.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

	/**
	 * The bucket name: the unit of configuration, metrics and the actuator endpoint.
	 * Defaults to {@code <SimpleClassName>.<method>}.
	 * @return the bucket name
	 */
	String bucket() default "";

	/**
	 * SpEL for the key within the bucket, e.g. {@code #username} or {@code #clientIp}.
	 * Empty means one limit shared by every caller.
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * Permits per window; {@code 0} leaves it to configuration or the defaults.
	 * @return the limit
	 */
	long limit() default 0;

	/**
	 * The window: {@code 500ms}, {@code 10s}, {@code 1m}, {@code 1h}, {@code 1d} or
	 * ISO-8601. Empty leaves it to configuration or the defaults.
	 * @return the window
	 */
	String window() default "";

	/**
	 * The algorithm (at most one); empty leaves it to configuration or the defaults.
	 * @return the algorithm
	 */
	Algorithm[] algorithm() default {};

	/**
	 * Bucket capacity (token bucket, GCRA) or queue size (leaky bucket); {@code 0} means
	 * the limit.
	 * @return the burst
	 */
	long burst() default 0;

	/**
	 * How long a key is blocked once this limit rejects one of its calls, e.g.
	 * {@code 15m}: every call of the key is then rejected, with a retry-after at the end
	 * of the block. Empty leaves it to configuration (none by default).
	 * @return the penalty
	 */
	String penalty() default "";

	/**
	 * Counts by the calendar instead of {@link #window()}: {@code day}, {@code week}
	 * (ISO, from Monday), {@code month}, {@code quarter} or {@code year}, from local
	 * midnight in {@link #zone()}; with {@link Algorithm#FIXED_WINDOW} only. Empty for a
	 * window of a fixed length.
	 * @return the calendar unit
	 */
	String calendar() default "";

	/**
	 * The time zone of a {@link #calendar()} window, an IANA id such as
	 * {@code Europe/Berlin}; empty for UTC.
	 * @return the zone id
	 */
	String zone() default "";

	/**
	 * SpEL returning the time zone of this call's {@link #calendar()} window, e.g.
	 * {@code #customer.zoneId()} (a {@code ZoneId} or an IANA id): each customer's month
	 * then starts at their own midnight; it replaces {@link #zone()} per call. The bucket
	 * must have a calendar window.
	 * @return the zone expression
	 */
	String zoneExpression() default "";

	/**
	 * SpEL for the permits one call takes; must evaluate to a whole number {@code >= 1}.
	 * @return the cost expression
	 */
	String cost() default "1";

	/**
	 * SpEL returning the limit for this call, e.g. {@code @plans.limitFor(#apiKey)}; it
	 * replaces {@link #limit()} per call.
	 * @return the limit expression
	 */
	String limitExpression() default "";

	/**
	 * What to do when the limit is reached.
	 * @return the behaviour
	 */
	OnLimit onLimit() default OnLimit.REJECT;

	/**
	 * Longest wait for {@link OnLimit#WAIT}, and longest leaky bucket delay accepted,
	 * e.g. {@code 2s}. Empty means no wait (and, for leaky bucket, any delay).
	 * @return the longest wait
	 */
	String maxWait() default "";

	/**
	 * Name of a method of the same bean, with the same parameters (optionally followed by
	 * a {@code RateLimitExceededException}), called instead of throwing when rejected.
	 * @return the fallback method name
	 */
	String fallbackMethod() default "";

	/**
	 * SpEL; when it evaluates to {@code true} the call is not limited (e.g. an
	 * allowlisted client).
	 * @return the skip condition
	 */
	String skipWhen() default "";

	/**
	 * SpEL evaluated after the call, with {@code #result} and {@code #exception}; when
	 * {@code true} the permits are given back (e.g. only failed logins count). Not
	 * supported with {@link Algorithm#LEAKY_BUCKET}.
	 * @return the refund condition
	 */
	String refundWhen() default "";

	/**
	 * SpEL for the permits the call really used, evaluated once it returns, with
	 * {@code #result}: the call then settles, as a reservation of {@link #cost()} (the
	 * estimate). Less than the estimate gives the difference back; more takes the excess
	 * even past the limit, putting the key into debt until it is paid off at the limit's
	 * rate. For a {@code Mono}, a {@code CompletionStage} or a Kotlin {@code suspend}
	 * function, {@code #result} is the value it completed with; for a {@code Flux} (or a
	 * Kotlin {@code Flow}) the expression is evaluated for each element and the values
	 * are summed, settled when the stream completes or is cancelled. E.g.
	 * {@code cost = "#request.maxTokens()", settle = "#result.usage().totalTokens()"}.
	 * Must evaluate to a whole number; a negative one is logged and settled as 0, and a
	 * value that is no number (or an expression that fails) is logged and keeps the
	 * estimate.
	 * @return the settlement expression; empty for a fixed cost
	 */
	String settle() default "";

	/**
	 * SpEL for what a call that throws (or a stream that fails) used, with
	 * {@code #exception} and, for a {@code Flux}, {@code #settled}: what its elements
	 * summed to so far. E.g. {@code "0"} to give the whole estimate back. Empty keeps the
	 * estimate, and a stream keeps the larger of its estimate and what it streamed. Only
	 * with {@link #settle()}.
	 * @return the settlement expression for failed calls
	 */
	String settleOnError() default "";

	/**
	 * Holds repeated {@link RateLimited} annotations.
	 */
	@Target({ ElementType.METHOD, ElementType.TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface List {

		/**
		 * The annotations.
		 * @return the annotations
		 */
		RateLimited[] value();

	}

}
