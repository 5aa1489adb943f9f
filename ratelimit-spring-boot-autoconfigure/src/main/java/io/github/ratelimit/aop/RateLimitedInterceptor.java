package io.github.ratelimit.aop;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.aop.operation.RateLimitedMethod;
import io.github.ratelimit.aop.operation.RateLimitedOperationSource;
import io.github.ratelimit.aop.operation.ReturnKind;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.concurrency.HeldPermits;
import io.github.ratelimit.expression.NullKeyPolicy;

/**
 * Applies the {@link RateLimited @RateLimited} operations of the invoked method:
 * evaluates their expressions, takes the call's permits through the {@link Acquirer}
 * (every bucket in order, all or nothing, waiting when told to), calls the method or its
 * fallback, and gives back what {@code refundWhen} asks for or settles what
 * {@code settle} says the call used.
 * <p>
 * Methods returning {@code CompletionStage}, {@code CompletableFuture}, {@code Mono} or
 * {@code Flux} are limited without blocking: the method (for a stage) or the subscription
 * (for a publisher) waits for the permits, and every failure, the rejection included, is
 * delivered through the returned stage or publisher. So are Kotlin {@code suspend}
 * functions (Spring's AOP proxy hands them to interceptors as a {@code Mono}, which it
 * awaits) and functions returning a Kotlin {@code Flow} (limited on each collection, like
 * a {@code Flux} on each subscription). Other methods are limited on the calling thread.
 * <p>
 * A method with {@code @ConcurrencyLimited} too has its permit handed over by the
 * {@link ConcurrencyLimitedInterceptor}, which runs first: the permit is taken here,
 * before the rate limits are decided and in the same store call when both limit one
 * bucket and key, and held until the call, its stage or its publisher ends.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitedInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(RateLimitedInterceptor.class);

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			RateLimitedInterceptor.class.getClassLoader());

	private final RateLimitedOperationSource source;

	private final Acquirer acquirer;

	private final CallPlanner planner;

	private final AfterCall afterCall;

	private final @Nullable ReactorRateLimiting reactor;

	private final ClientIpResolver clientIps;

	/**
	 * Creates an interceptor.
	 * @param source the operations of each method
	 * @param acquirer takes the permits, waits and gives them back (its waiter decides
	 * the clock, how calls wait and where asynchronous calls continue)
	 * @param nullKeyPolicy what to do when a key evaluates to {@code null}
	 * @param clientIps works out {@code #clientIp}
	 */
	public RateLimitedInterceptor(RateLimitedOperationSource source, Acquirer acquirer, NullKeyPolicy nullKeyPolicy,
			ClientIpResolver clientIps) {
		this.source = Objects.requireNonNull(source, "'source' must not be null");
		this.clientIps = Objects.requireNonNull(clientIps, "'clientIps' must not be null");
		this.acquirer = Objects.requireNonNull(acquirer, "'acquirer' must not be null");
		Objects.requireNonNull(nullKeyPolicy, "'nullKeyPolicy' must not be null");
		this.planner = new CallPlanner(source.expressions(), nullKeyPolicy);
		this.afterCall = new AfterCall(this.planner, acquirer);
		this.reactor = REACTOR_PRESENT ? new ReactorRateLimiting(acquirer, this.afterCall) : null;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		RateLimitedMethod method = this.source.getRateLimitedMethod(invocation.getMethod(), targetClass);
		if (method == null) {
			return invocation.proceed();
		}
		// Handed over by the concurrency interceptor when the method has
		// @ConcurrencyLimited too: its permit is taken here, with the decision.
		ConcurrencyClaim claim = ConcurrencyClaim.of(invocation);
		ReturnKind kind = method.returnKind();
		if (kind.isReactive() && method.readsRequest() && this.reactor != null && this.reactor.findsReactiveRequests()
				&& CallerContext.currentRequest() == null) {
			// A WebFlux request is in the subscriber's context, not on this thread.
			return this.reactor.invokePlanningOnSubscribe(invocation, method, this.planner,
					() -> context(invocation, method, target), claim);
		}
		RateLimitedEvaluationContext context = context(invocation, method, target);
		if (!kind.isAsync()) {
			return invokeBlocking(invocation, method, context, claim);
		}
		CallPlan plan;
		try {
			plan = this.planner.plan(method, context);
		}
		catch (RuntimeException ex) {
			return failed(method, ex);
		}
		if (plan.isEmpty() && claim == null) {
			return invocation.proceed();
		}
		if (method.actsAfterCall()) {
			context.captureCaller();
		}
		if (kind == ReturnKind.COMPLETION_STAGE) {
			return invokeCompletionStage(invocation, method, plan, context, claim);
		}
		return reactor().invoke(invocation, method, plan, context, claim);
	}

	private RateLimitedEvaluationContext context(MethodInvocation invocation, RateLimitedMethod method,
			@Nullable Object target) {
		return new RateLimitedEvaluationContext(method, invocation.getArguments(), target, this.source.beanResolver(),
				this.source.parameterNameDiscoverer(), this.clientIps);
	}

	private @Nullable Object invokeBlocking(MethodInvocation invocation, RateLimitedMethod method,
			RateLimitedEvaluationContext context, @Nullable ConcurrencyClaim claim) throws Throwable {
		CallPlan plan = this.planner.plan(method, context);
		if (plan.isEmpty() && claim == null) {
			return invocation.proceed();
		}
		Acquisition acquisition;
		ConcurrencyPermit permit = null;
		if (claim != null) {
			ConcurrencyClaim.Held held = claim.acquire(this.acquirer, plan.requests());
			acquisition = held.acquisition();
			permit = held.permit();
		}
		else {
			acquisition = this.acquirer.acquire(plan.requests());
		}
		if (!acquisition.granted()) {
			if (method.scheduledTask() && !plan.hasFallback(acquisition)) {
				if (logger.isDebugEnabled()) {
					logger.debug("Skipped a tick of @Scheduled " + method.description() + ": "
							+ acquisition.exception().getMessage());
				}
				return null;
			}
			return plan.fallbackOrThrow(acquisition, invocation.getThis(), invocation.getArguments());
		}
		Object result;
		ConcurrencyPermit outer = (permit != null) ? HeldPermits.set(permit) : null;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			if (permit != null) {
				permit.release();
			}
			if (method.actsAfterCall()) {
				try {
					this.afterCall.afterCall(plan, acquisition, context, null, ex, null);
				}
				catch (RuntimeException refundFailure) {
					// The method's own failure is what the caller must see.
					ex.addSuppressed(refundFailure);
				}
			}
			throw ex;
		}
		finally {
			if (permit != null) {
				HeldPermits.set(outer);
			}
		}
		if (permit != null) {
			permit.release();
		}
		if (method.actsAfterCall()) {
			this.afterCall.afterCall(plan, acquisition, context, result, null, null);
		}
		return result;
	}

	/**
	 * Calls the method once its permits are granted. The acquirer completes the stage at
	 * once when nothing had to wait (the method then runs on the calling thread, which
	 * keeps its thread-bound context), and otherwise on its executor, never on a store's
	 * I/O thread. A concurrency permit handed over with the call is taken on the calling
	 * thread, as {@code @ConcurrencyLimited} alone takes it, and held until the returned
	 * stage completes.
	 */
	private CompletableFuture<Object> invokeCompletionStage(MethodInvocation invocation, RateLimitedMethod method,
			CallPlan plan, RateLimitedEvaluationContext context, @Nullable ConcurrencyClaim claim) {
		if (claim != null) {
			ConcurrencyClaim.Held held;
			try {
				held = claim.acquire(this.acquirer, plan.requests());
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
			return proceedOrFallback(invocation, method, plan, held.acquisition(), held.permit(), context)
				.toCompletableFuture();
		}
		CompletionStage<Acquisition> acquired;
		try {
			acquired = this.acquirer.acquireAsync(plan.requests());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return acquired
			.thenCompose((acquisition) -> proceedOrFallback(invocation, method, plan, acquisition, null, context))
			.toCompletableFuture();
	}

	private CompletionStage<Object> proceedOrFallback(MethodInvocation invocation, RateLimitedMethod method,
			CallPlan plan, Acquisition acquisition, @Nullable ConcurrencyPermit permit,
			RateLimitedEvaluationContext context) {
		return acquisition.granted() ? proceed(invocation, method, plan, acquisition, permit, context)
				: fallback(invocation, plan, acquisition);
	}

	private CompletionStage<Object> proceed(MethodInvocation invocation, RateLimitedMethod method, CallPlan plan,
			Acquisition acquisition, @Nullable ConcurrencyPermit permit, RateLimitedEvaluationContext context) {
		CompletionStage<?> stage;
		try {
			stage = (CompletionStage<?>) invocation.proceed();
		}
		catch (Throwable ex) {
			stage = CompletableFuture.failedFuture(ex);
		}
		if (stage == null) {
			stage = CompletableFuture.completedFuture(null);
		}
		if (permit != null) {
			stage = stage.whenComplete((value, failure) -> permit.release());
		}
		if (!method.actsAfterCall()) {
			return stage.thenApply((value) -> value);
		}
		return stage.handle((value, failure) -> {
			Throwable cause = unwrap(failure);
			return this.afterCall.afterCallAsync(plan, acquisition, context, value, cause, null)
				.handle((done, refundFailure) -> {
					if (cause != null) {
						if (refundFailure != null) {
							cause.addSuppressed(unwrap(refundFailure));
						}
						return CompletableFuture.<Object>failedFuture(cause);
					}
					if (refundFailure != null) {
						return CompletableFuture.<Object>failedFuture(unwrap(refundFailure));
					}
					return CompletableFuture.<Object>completedFuture(value);
				})
				.thenCompose(Function.identity());
		}).thenCompose(Function.identity());
	}

	private CompletionStage<Object> fallback(MethodInvocation invocation, CallPlan plan, Acquisition acquisition) {
		try {
			Object result = plan.fallbackOrThrow(acquisition, invocation.getThis(), invocation.getArguments());
			return (result != null) ? ((CompletionStage<?>) result).thenApply((value) -> value)
					: CompletableFuture.completedFuture(null);
		}
		catch (Throwable ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private Object failed(RateLimitedMethod method, Throwable failure) {
		return (method.returnKind() == ReturnKind.COMPLETION_STAGE) ? CompletableFuture.failedFuture(failure)
				: reactor().error(method, failure);
	}

	private ReactorRateLimiting reactor() {
		if (this.reactor == null) {
			throw new IllegalStateException("Reactor is not on the classpath");
		}
		return this.reactor;
	}

	private static @Nullable Throwable unwrap(@Nullable Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

}
