package io.github.ratelimit.aop.operation;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.core.KotlinDetector;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Durations;
import io.github.ratelimit.acquire.WaitPolicy;
import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.bucket.BucketConstraint;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.expression.RateLimitExpressions;

/**
 * Turns one {@link RateLimited @RateLimited} into a {@link RateLimitedOperation}:
 * registers its bucket, parses its expressions and durations and finds its fallback, so
 * that every mistake surfaces at startup with a message naming the class, the method, the
 * attribute and the value.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RateLimitedOperationParser {

	private final Supplier<BucketRegistry> registry;

	private final RateLimitExpressions expressions;

	RateLimitedOperationParser(Supplier<BucketRegistry> registry, RateLimitExpressions expressions) {
		this.registry = registry;
		this.expressions = expressions;
	}

	/**
	 * Parses one annotation.
	 * @param annotation the annotation
	 * @param method the annotated method, on the target class
	 * @param targetClass the user class of the bean
	 * @return the operation
	 * @throws InvalidRateLimitedException naming the method, attribute and value at fault
	 */
	RateLimitedOperation parse(RateLimited annotation, Method method, Class<?> targetClass) {
		String description = describe(method, targetClass);
		String bucketName = StringUtils.hasText(annotation.bucket()) ? annotation.bucket()
				: targetClass.getSimpleName() + "." + method.getName();
		LimitSettings settings = new LimitSettings(algorithm(annotation, description),
				(annotation.limit() != 0) ? annotation.limit() : null,
				duration(annotation.window(), "window", description),
				(annotation.burst() != 0) ? annotation.burst() : null, null,
				duration(annotation.penalty(), "penalty", description),
				StringUtils.hasText(annotation.calendar()) ? annotation.calendar() : null,
				StringUtils.hasText(annotation.zone()) ? annotation.zone() : null);
		BucketDefinition bucket = this.registry.get()
			.register(bucketName, settings, BucketSource.ANNOTATION, "@RateLimited on " + description);
		Duration maxWait = maxWait(annotation, description);
		if (annotation.onLimit() == OnLimit.WAIT && maxWait == null) {
			throw new InvalidRateLimitedException(RateLimitedOperation.where("onLimit", description),
					"WAIT needs maxWait, the longest a call may wait for a permit (e.g. maxWait = \"2s\")",
					"Add maxWait (e.g. maxWait = \"2s\") to the @RateLimited on " + description
							+ ", or use onLimit = REJECT.");
		}
		Expression refundWhen = expression(annotation.refundWhen(), "refundWhen", description);
		if (refundWhen != null) {
			// Checked now and for every live change of the bucket's limits.
			this.registry.get()
				.constrain(bucketName, RateLimitedOperation.where("refundWhen", description),
						refundable(bucketName, annotation.refundWhen(), description));
		}
		Expression settle = expression(annotation.settle(), "settle", description);
		Expression settleOnError = expression(annotation.settleOnError(), "settleOnError", description);
		if (settleOnError != null && settle == null) {
			throw new InvalidRateLimitedException(RateLimitedOperation.where("settleOnError", description),
					"'" + annotation.settleOnError() + "' says what a failed call used, but there is no settle to say"
							+ " what a call that returns used",
					"Add settle (e.g. settle = \"#result.usage().totalTokens()\") to the @RateLimited on " + description
							+ ", or remove settleOnError.");
		}
		Expression zone = expression(annotation.zoneExpression(), "zoneExpression", description);
		if (zone != null) {
			// Checked now and for every live change of the bucket's limits.
			this.registry.get()
				.constrain(bucketName, RateLimitedOperation.where("zoneExpression", description),
						calendared(bucketName, annotation.zoneExpression(), description));
		}
		if (StringUtils.hasText(annotation.limitExpression())) {
			this.registry.get().limitPerCall(bucketName, annotation.limitExpression());
		}
		RateLimitedOperation.Builder builder = new RateLimitedOperation.Builder(bucket, description)
			.key(expression(annotation.key(), "key", description))
			.limit(expression(annotation.limitExpression(), "limitExpression", description))
			.skipWhen(expression(annotation.skipWhen(), "skipWhen", description))
			.refundWhen(refundWhen)
			.settle(settle, settleOnError)
			.zone(zone)
			.waitPolicy(WaitPolicy.of(annotation.onLimit() == OnLimit.WAIT, maxWait));
		cost(annotation.cost(), description, builder);
		if (StringUtils.hasText(annotation.fallbackMethod())) {
			builder.fallback(FallbackMethod.resolve(targetClass, method, annotation.fallbackMethod().trim(),
					RateLimitedOperation.where("fallbackMethod", description)));
		}
		return builder.build();
	}

	/**
	 * Returns the check that a bucket's permits can be given back, which
	 * {@code refundWhen} needs: a leaky bucket's slots cannot.
	 */
	private static BucketConstraint refundable(String bucketName, String refundWhen, String description) {
		return (limits) -> {
			if (limits.stream().anyMatch((spec) -> spec.algorithm() == Algorithm.LEAKY_BUCKET)) {
				throw new InvalidRateLimitedException(RateLimitedOperation.where("refundWhen", description),
						"bucket '" + bucketName + "' uses LEAKY_BUCKET, whose slots cannot be given back once handed"
								+ " out (" + limits + "); remove refundWhen '" + refundWhen
								+ "' or choose another algorithm",
						"Remove refundWhen from the @RateLimited on " + description + ", or choose another algorithm"
								+ " for bucket '" + bucketName + "' (annotation or ratelimit.buckets." + bucketName
								+ ".algorithm).");
			}
		};
	}

	/**
	 * Returns the check that a bucket has a calendar window, which {@code zoneExpression}
	 * sets the zone of.
	 */
	private static BucketConstraint calendared(String bucketName, String zoneExpression, String description) {
		return (limits) -> {
			if (limits.stream().noneMatch((spec) -> spec.calendar() != null)) {
				throw new InvalidRateLimitedException(RateLimitedOperation.where("zoneExpression", description),
						"bucket '" + bucketName + "' has no calendar window (" + limits + "), so '" + zoneExpression
								+ "' has no zone to set",
						"Give bucket '" + bucketName + "' a calendar window (calendar = \"month\" with algorithm"
								+ " FIXED_WINDOW, or ratelimit.buckets." + bucketName + ".calendar), or remove"
								+ " zoneExpression from the @RateLimited on " + description + ".");
			}
		};
	}

	/**
	 * Describes a method for messages, e.g. {@code LoginService.login(String, String)}; a
	 * Kotlin {@code suspend} function as declared, e.g.
	 * {@code suspend QuoteService.quote(String)}, without the {@code Continuation} its
	 * compiled form takes last.
	 * @param method the method
	 * @param targetClass the user class of the bean
	 * @return the description
	 */
	static String describe(Method method, Class<?> targetClass) {
		return (KotlinDetector.isSuspendingFunction(method) ? "suspend " : "") + ClassUtils.getShortName(targetClass)
				+ "." + method.getName() + "("
				+ Arrays.stream(KotlinFunctions.declaredParameterTypes(method))
					.map(Class::getSimpleName)
					.collect(Collectors.joining(", "))
				+ ")";
	}

	private @Nullable Algorithm algorithm(RateLimited annotation, String description) {
		Algorithm[] algorithms = annotation.algorithm();
		if (algorithms.length > 1) {
			throw new InvalidRateLimitedException(RateLimitedOperation.where("algorithm", description),
					"at most one algorithm, but was " + Arrays.toString(algorithms)
							+ "; repeat @RateLimited for several limits",
					"Give the @RateLimited on " + description + " one algorithm, and repeat @RateLimited (with"
							+ " different bucket names) for several limits.");
		}
		return (algorithms.length == 1) ? algorithms[0] : null;
	}

	private static @Nullable Duration duration(String value, String attribute, String description) {
		if (value.isEmpty()) {
			return null;
		}
		try {
			return Durations.parse(value);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidRateLimitedException(RateLimitedOperation.where(attribute, description),
					String.valueOf(ex.getMessage()), "Set " + attribute + " on the @RateLimited on " + description
							+ " to a number with a unit (500ms, 10s, 1m, 1h, 1d) or ISO-8601 (PT1M).",
					ex);
		}
	}

	private @Nullable Duration maxWait(RateLimited annotation, String description) {
		if (annotation.maxWait().isEmpty()) {
			return null;
		}
		Duration maxWait;
		try {
			maxWait = Durations.parse(annotation.maxWait());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidRateLimitedException(RateLimitedOperation.where("maxWait", description),
					String.valueOf(ex.getMessage()), "Set maxWait on the @RateLimited on " + description
							+ " to a number with a unit (500ms, 10s, 1m) or ISO-8601 (PT2S).",
					ex);
		}
		if (maxWait.isNegative()) {
			throw new InvalidRateLimitedException(RateLimitedOperation.where("maxWait", description),
					"must not be negative but was '" + annotation.maxWait() + "'",
					"Set maxWait on the @RateLimited on " + description + " to zero or more, e.g. \"2s\".");
		}
		return maxWait;
	}

	private void cost(String cost, String description, RateLimitedOperation.Builder builder) {
		String text = cost.trim();
		// A literal (the default "1") needs no evaluation per call, and a bad one can be
		// reported now rather than on the first call.
		if (!text.isEmpty() && text.chars().allMatch(Character::isDigit)) {
			try {
				builder.fixedCost(RateLimitExpressions.cost(text));
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidRateLimitedException(RateLimitedOperation.where("cost", description),
						String.valueOf(ex.getMessage()), "Set cost on the @RateLimited on " + description
								+ " to a whole number of at least 1, or leave it out for 1.");
			}
			return;
		}
		if (text.isEmpty()) {
			throw new InvalidRateLimitedException(RateLimitedOperation.where("cost", description),
					"must not be empty; leave it out for a cost of 1",
					"Remove cost from the @RateLimited on " + description + " for a cost of 1, or set SpEL that"
							+ " gives a whole number of at least 1.");
		}
		builder.cost(expression(text, "cost", description));
	}

	private @Nullable Expression expression(String text, String attribute, String description) {
		if (!StringUtils.hasText(text)) {
			return null;
		}
		return this.expressions.parse(text, RateLimitedOperation.where(attribute, description));
	}

}
