package io.github.ratelimit.aop;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.spring.NullKeyPolicy;
import io.github.ratelimit.spring.RateLimitService;

/**
 * Applies the {@link RateLimited @RateLimited} operations of the invoked method:
 * evaluates their expressions, takes a permit from each bucket in order (all or nothing),
 * waits when told to, calls the method or its fallback, and refunds what
 * {@code refundWhen} asks for.
 * <p>
 * Methods returning {@code CompletionStage}, {@code CompletableFuture}, {@code Mono} or
 * {@code Flux} are limited without blocking: the method (for a stage) or the subscription
 * (for a publisher) waits for the permits, and every failure, the rejection included, is
 * delivered through the returned stage or publisher. Other methods are limited on the
 * calling thread.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitedInterceptor implements MethodInterceptor {

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			RateLimitedInterceptor.class.getClassLoader());

	private final RateLimitedOperationSource source;

	private final CallPlanner planner;

	private final Refunds refunds;

	private final BlockingLimiter blocking;

	private final AsyncLimiter async;

	private final Executor executor;

	private final @Nullable ReactorRateLimiting reactor;

	/**
	 * Creates an interceptor on the system clock that waits with {@link Thread#sleep} and
	 * continues asynchronous calls on the common fork-join pool.
	 * @param source the operations of each method
	 * @param service makes the decisions
	 * @param nullKeyPolicy what to do when a key evaluates to {@code null}
	 */
	public RateLimitedInterceptor(RateLimitedOperationSource source, RateLimitService service,
			NullKeyPolicy nullKeyPolicy) {
		this(source, service, nullKeyPolicy, TimeSource.system(), PermitWaiter.system());
	}

	/**
	 * Creates an interceptor.
	 * @param source the operations of each method
	 * @param service makes the decisions
	 * @param nullKeyPolicy what to do when a key evaluates to {@code null}
	 * @param clock measures how long a call has waited against {@code maxWait}
	 * @param waiter waits for permits and leaky bucket slots
	 */
	public RateLimitedInterceptor(RateLimitedOperationSource source, RateLimitService service,
			NullKeyPolicy nullKeyPolicy, TimeSource clock, PermitWaiter waiter) {
		this.source = Objects.requireNonNull(source, "'source' must not be null");
		Objects.requireNonNull(service, "'service' must not be null");
		Objects.requireNonNull(nullKeyPolicy, "'nullKeyPolicy' must not be null");
		Objects.requireNonNull(clock, "'clock' must not be null");
		Objects.requireNonNull(waiter, "'waiter' must not be null");
		this.planner = new CallPlanner(source.expressions(), nullKeyPolicy);
		this.executor = waiter.executor();
		this.refunds = new Refunds(service, this.planner, this.executor);
		this.blocking = new BlockingLimiter(service, clock, waiter, this.refunds);
		this.async = new AsyncLimiter(service, clock, waiter, this.refunds);
		this.reactor = REACTOR_PRESENT ? new ReactorRateLimiting(this.async, this.refunds) : null;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		RateLimitedMethod method = this.source.getRateLimitedMethod(invocation.getMethod(), targetClass);
		if (method == null) {
			return invocation.proceed();
		}
		RateLimitedEvaluationContext context = new RateLimitedEvaluationContext(method, invocation.getArguments(),
				target, this.source.beanResolver(), this.source.parameterNameDiscoverer());
		ReturnKind kind = method.returnKind();
		if (!kind.isAsync()) {
			return invokeBlocking(invocation, method, context);
		}
		List<PlannedLimit> plan;
		try {
			plan = this.planner.plan(method, context);
		}
		catch (RuntimeException ex) {
			return failed(kind, ex);
		}
		if (plan.isEmpty()) {
			return invocation.proceed();
		}
		if (method.refundsAfterCall()) {
			context.captureCaller();
		}
		if (kind == ReturnKind.COMPLETION_STAGE) {
			return invokeCompletionStage(invocation, method, plan, context);
		}
		return reactor().invoke(invocation, method, plan, context);
	}

	private @Nullable Object invokeBlocking(MethodInvocation invocation, RateLimitedMethod method,
			RateLimitedEvaluationContext context) throws Throwable {
		List<PlannedLimit> plan = this.planner.plan(method, context);
		if (plan.isEmpty()) {
			return invocation.proceed();
		}
		Acquisition acquisition = this.blocking.acquire(plan);
		if (!acquisition.granted()) {
			return acquisition.fallbackOrThrow(invocation.getThis(), invocation.getArguments());
		}
		this.blocking.awaitDelay(acquisition);
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			if (method.refundsAfterCall()) {
				try {
					this.refunds.afterCall(acquisition.permits(), context, null, ex);
				}
				catch (RuntimeException refundFailure) {
					// The method's own failure is what the caller must see.
					ex.addSuppressed(refundFailure);
				}
			}
			throw ex;
		}
		if (method.refundsAfterCall()) {
			this.refunds.afterCall(acquisition.permits(), context, result, null);
		}
		return result;
	}

	private CompletableFuture<Object> invokeCompletionStage(MethodInvocation invocation, RateLimitedMethod method,
			List<PlannedLimit> plan, RateLimitedEvaluationContext context) {
		CompletableFuture<Acquisition> acquired;
		try {
			acquired = this.async.acquire(plan).toCompletableFuture();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		Function<Acquisition, CompletionStage<Object>> next = (acquisition) -> acquisition.granted()
				? proceed(invocation, method, acquisition, context) : fallback(invocation, acquisition);
		// Decided at once (in-memory store, no wait): call the method on the calling
		// thread, which keeps its thread-bound context. Otherwise continue on the
		// executor, never on a store's I/O thread.
		return acquired.isDone() ? acquired.thenCompose(next) : acquired.thenComposeAsync(next, this.executor);
	}

	private CompletionStage<Object> proceed(MethodInvocation invocation, RateLimitedMethod method,
			Acquisition acquisition, RateLimitedEvaluationContext context) {
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
		if (!method.refundsAfterCall()) {
			return stage.thenApply((value) -> value);
		}
		return stage.handle((value, failure) -> {
			Throwable cause = unwrap(failure);
			return this.refunds.afterCallAsync(acquisition.permits(), context, value, cause)
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

	private CompletionStage<Object> fallback(MethodInvocation invocation, Acquisition acquisition) {
		try {
			Object result = acquisition.fallbackOrThrow(invocation.getThis(), invocation.getArguments());
			return (result != null) ? ((CompletionStage<?>) result).thenApply((value) -> value)
					: CompletableFuture.completedFuture(null);
		}
		catch (Throwable ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private Object failed(ReturnKind kind, Throwable failure) {
		return (kind == ReturnKind.COMPLETION_STAGE) ? CompletableFuture.failedFuture(failure)
				: reactor().error(kind, failure);
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
