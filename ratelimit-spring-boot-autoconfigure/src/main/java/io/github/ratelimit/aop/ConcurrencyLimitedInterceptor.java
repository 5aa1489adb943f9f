package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import io.github.ratelimit.Durations;
import io.github.ratelimit.annotation.ConcurrencyLimited;
import io.github.ratelimit.aop.operation.RateLimitedMethod;
import io.github.ratelimit.aop.operation.RateLimitedOperationSource;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.bucket.InvalidConcurrencyLimitException;
import io.github.ratelimit.concurrency.ConcurrencyLimitExceededException;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.concurrency.HeldPermits;
import io.github.ratelimit.expression.RateLimitExpressions;

/**
 * Holds a permit of the method's {@link ConcurrencyLimited @ConcurrencyLimited} bucket
 * while the call runs: taken before it, given back once when it returns or throws, or
 * when the {@code CompletionStage}, {@code Mono}, {@code Flux}, Kotlin {@code Flow} or
 * {@code suspend} call it makes completes, fails or is cancelled.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ConcurrencyLimitedInterceptor implements MethodInterceptor, SmartInitializingSingleton {

	private static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono",
			ConcurrencyLimitedInterceptor.class.getClassLoader());

	private final ConcurrencyLimiters limiters;

	private final RateLimitExpressions expressions;

	private final ParameterNameDiscoverer names = new DefaultParameterNameDiscoverer();

	private final Map<Method, Plan> plans = new ConcurrentHashMap<>();

	private final Map<Called, Resolved> resolved = new ConcurrentHashMap<>();

	private final Supplier<List<Method>> methods;

	private final @Nullable RateLimitedOperationSource rateLimits;

	/**
	 * Creates the interceptor for methods that are not rate limited too.
	 * @param limiters the limiters by bucket
	 * @param expressions parses and evaluates keys
	 * @param methods the methods with {@code @ConcurrencyLimited} of the beans proxied,
	 * checked once every singleton exists
	 */
	public ConcurrencyLimitedInterceptor(ConcurrencyLimiters limiters, RateLimitExpressions expressions,
			Supplier<List<Method>> methods) {
		this(limiters, expressions, methods, null);
	}

	/**
	 * Creates the interceptor. A call of a method that {@code @RateLimited} limits too
	 * has its permit taken by the {@link RateLimitedInterceptor}, which must then run
	 * after this one (its advisor is ordered so): with the rate limits' decision, in one
	 * store call when both limit the same bucket and key. A method that waits for its
	 * permit ({@code maxWait}) takes it here, alone.
	 * @param limiters the limiters by bucket
	 * @param expressions parses and evaluates keys
	 * @param methods the methods with {@code @ConcurrencyLimited} of the beans proxied,
	 * checked once every singleton exists
	 * @param rateLimits the methods' {@code @RateLimited} operations, or {@code null}
	 * when no {@link RateLimitedInterceptor} runs
	 */
	public ConcurrencyLimitedInterceptor(ConcurrencyLimiters limiters, RateLimitExpressions expressions,
			Supplier<List<Method>> methods, @Nullable RateLimitedOperationSource rateLimits) {
		this.limiters = limiters;
		this.expressions = expressions;
		this.methods = methods;
		this.rateLimits = rateLimits;
	}

	/**
	 * Works out, once, what each method needs per call, so that a mistake fails startup
	 * rather than the first call.
	 * @throws InvalidConcurrencyLimitException naming the method and attribute at fault
	 */
	@Override
	public void afterSingletonsInstantiated() {
		for (Method method : this.methods.get()) {
			plan(method);
		}
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Class<?> targetClass = (invocation.getThis() != null) ? AopUtils.getTargetClass(invocation.getThis())
				: invocation.getMethod().getDeclaringClass();
		// Resolved once per method and class: the lookup reflects, every call would pay
		// it.
		Resolved resolved = this.resolved.computeIfAbsent(new Called(invocation.getMethod(), targetClass),
				this::resolve);
		Method method = resolved.specific();
		Plan plan = plan(method);
		if (plan == null) {
			return invocation.proceed();
		}
		String key = plan.key(invocation.getArguments());
		boolean sameBucket = resolved.rateLimitedBuckets().contains(plan.limiter.bucket());
		if (!resolved.rateLimitedBuckets().isEmpty() && plan.maxWait.isZero()
				&& invocation instanceof ProxyMethodInvocation proxied) {
			new ConcurrencyClaim(plan.limiter, key, sameBucket).handTo(proxied);
			return invocation.proceed();
		}
		if (plan.reactive) {
			return ReactorConcurrency.limit(plan.limiter, key, plan.maxWait, sameBucket, invocation, method);
		}
		ConcurrencyPermit permit = acquire(plan.limiter, key, plan.maxWait, sameBucket);
		Object result;
		ConcurrencyPermit outer = HeldPermits.set(permit);
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			permit.release();
			throw ex;
		}
		finally {
			HeldPermits.set(outer);
		}
		if (result instanceof CompletionStage<?> stage) {
			stage.whenComplete((value, failure) -> permit.release());
			return result;
		}
		permit.release();
		return result;
	}

	/**
	 * Takes a permit, waiting up to {@code maxWait}; throws when none came.
	 * @param limiter the limiter
	 * @param key the key
	 * @param maxWait the longest wait, zero for none
	 * @param alsoRateLimited whether {@code @RateLimited} of the same bucket limits the
	 * call too (the refusal's policy is then named apart)
	 * @return the permit, held
	 * @throws ConcurrencyLimitExceededException when no permit was free
	 * @throws InterruptedException when interrupted while waiting
	 */
	static ConcurrencyPermit acquire(ConcurrencyLimiter limiter, String key, Duration maxWait, boolean alsoRateLimited)
			throws InterruptedException {
		ConcurrencyPermit permit = maxWait.isZero() ? limiter.tryAcquire(key) : limiter.acquire(key, maxWait);
		if (!permit.acquired()) {
			throw new ConcurrencyLimitExceededException(limiter.bucket(), permit.decision(), alsoRateLimited);
		}
		if (permit.leaseExpired()) {
			// This JVM stopped (or the store took a lease to answer) since it asked: the
			// permit may be another call's by now.
			permit.release();
			throw new ConcurrencyLimitExceededException(limiter.bucket(), permit.decision(), alsoRateLimited);
		}
		return permit;
	}

	private @Nullable Plan plan(Method method) {
		Plan plan = this.plans.get(method);
		if (plan != null) {
			return plan;
		}
		ConcurrencyLimited annotation = annotationOf(method);
		if (annotation == null) {
			return null;
		}
		return this.plans.computeIfAbsent(method, (m) -> Plan.of(m, annotation, this));
	}

	/**
	 * Returns the annotation of a method, or of its class.
	 * @param method the method
	 * @return the annotation, or {@code null}
	 */
	static @Nullable ConcurrencyLimited annotationOf(Method method) {
		ConcurrencyLimited annotation = AnnotatedElementUtils.findMergedAnnotation(method, ConcurrencyLimited.class);
		return (annotation != null) ? annotation
				: AnnotatedElementUtils.findMergedAnnotation(method.getDeclaringClass(), ConcurrencyLimited.class);
	}

	/**
	 * Describes a method for messages, e.g. {@code ReportService.render(String)}.
	 * @param method the method
	 * @return the description
	 */
	static String describe(Method method) {
		StringBuilder text = new StringBuilder(method.getDeclaringClass().getSimpleName()).append('.')
			.append(method.getName())
			.append('(');
		Class<?>[] types = method.getParameterTypes();
		for (int i = 0; i < types.length; i++) {
			text.append((i > 0) ? ", " : "").append(types[i].getSimpleName());
		}
		return text.append(')').toString();
	}

	private Resolved resolve(Called called) {
		Method specific = AopUtils.getMostSpecificMethod(called.method(), called.target());
		RateLimitedMethod rateLimited = (this.rateLimits != null)
				? this.rateLimits.getRateLimitedMethod(called.method(), called.target()) : null;
		if (rateLimited == null) {
			return new Resolved(specific, Set.of());
		}
		Set<String> buckets = new HashSet<>();
		rateLimited.operations().forEach((operation) -> buckets.add(operation.bucket().name()));
		return new Resolved(specific, Set.copyOf(buckets));
	}

	/** A method as called on a target class. */
	private record Called(Method method, Class<?> target) {
	}

	/**
	 * What a method called on a target class is.
	 *
	 * @param specific the method the target class declares, whose annotations apply
	 * @param rateLimitedBuckets the buckets of its {@code @RateLimited} operations; when
	 * there are some, the rate limit interceptor takes its permit
	 */
	private record Resolved(Method specific, Set<String> rateLimitedBuckets) {
	}

	/** What one method needs per call, worked out once. */
	private record Plan(ConcurrencyLimiter limiter, @Nullable Expression key, String where, String[] parameters,
			Duration maxWait, boolean reactive, RateLimitExpressions expressions) {

		static Plan of(Method method, ConcurrencyLimited annotation, ConcurrencyLimitedInterceptor interceptor) {
			String origin = "@ConcurrencyLimited on " + describe(method);
			boolean kotlin = KotlinDetector.isSuspendingFunction(method)
					|| method.getReturnType().getName().equals(ReactorConcurrency.FLOW);
			if (kotlin && !REACTOR) {
				throw new InvalidConcurrencyLimitException(origin,
						"a Kotlin suspend function or Flow needs Reactor to hold its permit until it ends",
						"Add kotlinx-coroutines-reactor (and so reactor-core) to the application's dependencies.");
			}
			boolean reactive = REACTOR && (kotlin || ReactorConcurrency.handles(method.getReturnType()));
			if (!reactive && REACTOR && org.reactivestreams.Publisher.class.isAssignableFrom(method.getReturnType())) {
				throw new InvalidConcurrencyLimitException(origin,
						"returns a " + method.getReturnType().getSimpleName() + ", which it cannot hold a permit for",
						"Return a Mono, Flux, CompletionStage or a value.");
			}
			Duration lease = StringUtils.hasText(annotation.lease()) ? duration(annotation.lease(), origin, "lease")
					: null;
			Duration maxWait = StringUtils.hasText(annotation.maxWait())
					? duration(annotation.maxWait(), origin, "maxWait") : Duration.ZERO;
			ConcurrencyLimiter limiter = interceptor.limiters.get(annotation.bucket(),
					new ConcurrencyLimiters.Settings((annotation.permits() > 0) ? annotation.permits() : null, lease),
					origin);
			String where = "@ConcurrencyLimited(key) on " + describe(method);
			Expression key = StringUtils.hasText(annotation.key())
					? interceptor.expressions.parse(annotation.key(), where) : null;
			String[] parameters = interceptor.names.getParameterNames(method);
			return new Plan(limiter, key, where, (parameters != null) ? parameters : new String[0], maxWait, reactive,
					interceptor.expressions);
		}

		private static Duration duration(String value, String origin, String attribute) {
			try {
				Duration duration = Durations.parse(value);
				if (duration.isNegative()) {
					throw new IllegalArgumentException("must not be negative");
				}
				return duration;
			}
			catch (RuntimeException ex) {
				throw new InvalidConcurrencyLimitException(origin + " (attribute '" + attribute + "')",
						"'" + value + "' is not a duration (" + ex.getMessage() + ")",
						"Set " + attribute + " to a duration such as \"30s\" or \"500ms\".");
			}
		}

		String key(@Nullable Object[] arguments) {
			if (this.key == null) {
				return "";
			}
			StandardEvaluationContext context = this.expressions.context(null);
			context.setVariable("args", arguments);
			for (int i = 0; i < this.parameters.length && i < arguments.length; i++) {
				context.setVariable(this.parameters[i], arguments[i]);
			}
			Object value = this.expressions.evaluate(this.key, context, this.where);
			if (value == null) {
				throw new IllegalArgumentException(
						"'" + this.key.getExpressionString() + "' in " + this.where + " evaluated to null");
			}
			return value.toString();
		}

	}

}
