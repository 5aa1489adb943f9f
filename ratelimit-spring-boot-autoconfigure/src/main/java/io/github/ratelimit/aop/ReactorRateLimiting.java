package io.github.ratelimit.aop;

import java.util.List;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Limits methods returning {@code Mono} or {@code Flux}. The method runs when called and
 * assembles its publisher, as usual; each subscription to the returned publisher first
 * takes its permits (without blocking: decisions and waits are stages), then subscribes
 * to the method's publisher, or fails with the rejection, or switches to the fallback.
 * {@code refundWhen} sees a {@code Mono}'s value as {@code #result}; for a {@code Flux}
 * {@code #result} is {@code null} and only {@code #exception} tells how it ended.
 * <p>
 * The only class of the interceptor that uses Reactor; created only when Reactor is on
 * the classpath.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ReactorRateLimiting {

	private final AsyncLimiter limiter;

	private final Refunds refunds;

	ReactorRateLimiting(AsyncLimiter limiter, Refunds refunds) {
		this.limiter = limiter;
		this.refunds = refunds;
	}

	/**
	 * Limits a call.
	 * @param invocation the call
	 * @param method its limits
	 * @param plan the planned limits (not empty)
	 * @param context the call's context
	 * @return the limited {@code Mono} or {@code Flux}
	 * @throws Throwable what the method throws when called
	 */
	Object invoke(MethodInvocation invocation, RateLimitedMethod method, List<PlannedLimit> plan,
			RateLimitedEvaluationContext context) throws Throwable {
		Object returned = invocation.proceed();
		if (method.returnKind() == ReturnKind.MONO) {
			Mono<Object> source = (returned != null) ? ((Mono<?>) returned).cast(Object.class) : Mono.empty();
			return Mono.fromCompletionStage(() -> this.limiter.acquire(plan))
				.flatMap((acquisition) -> acquisition.granted()
						? withRefunds(source, method, acquisition.permits(), context)
						: Mono.from(fallback(invocation, acquisition)));
		}
		Flux<Object> source = (returned != null) ? Flux.from((Publisher<?>) returned).cast(Object.class) : Flux.empty();
		return Mono.fromCompletionStage(() -> this.limiter.acquire(plan))
			.flatMapMany((acquisition) -> acquisition.granted()
					? withRefunds(source, method, acquisition.permits(), context) : fallback(invocation, acquisition));
	}

	/**
	 * Returns a publisher that fails with {@code failure}, of the method's kind.
	 * @param kind the method's return kind
	 * @param failure the failure
	 * @return a failed {@code Mono} or {@code Flux}
	 */
	Object error(ReturnKind kind, Throwable failure) {
		return (kind == ReturnKind.MONO) ? Mono.error(failure) : Flux.error(failure);
	}

	private Mono<Object> withRefunds(Mono<Object> source, RateLimitedMethod method, List<Permit> permits,
			RateLimitedEvaluationContext context) {
		if (!method.refundsAfterCall()) {
			return source;
		}
		return source.onErrorResume((failure) -> afterFailure(permits, context, failure))
			.flatMap((value) -> afterCall(permits, context, value).thenReturn(value))
			.switchIfEmpty(Mono.defer(() -> afterCall(permits, context, null).then(Mono.empty())));
	}

	private Flux<Object> withRefunds(Flux<Object> source, RateLimitedMethod method, List<Permit> permits,
			RateLimitedEvaluationContext context) {
		if (!method.refundsAfterCall()) {
			return source;
		}
		return source.onErrorResume((failure) -> afterFailure(permits, context, failure))
			.concatWith(Mono.defer(() -> afterCall(permits, context, null)));
	}

	private Mono<Void> afterCall(List<Permit> permits, RateLimitedEvaluationContext context, @Nullable Object value) {
		return Mono.fromCompletionStage(() -> this.refunds.afterCallAsync(permits, context, value, null));
	}

	private Mono<Object> afterFailure(List<Permit> permits, RateLimitedEvaluationContext context, Throwable failure) {
		return Mono.fromCompletionStage(() -> this.refunds.afterCallAsync(permits, context, null, failure))
			.onErrorResume((refundFailure) -> {
				// The method's own failure is what the subscriber must see.
				failure.addSuppressed(refundFailure);
				return Mono.empty();
			})
			.then(Mono.error(failure));
	}

	private Flux<Object> fallback(MethodInvocation invocation, Acquisition acquisition) {
		return Flux.defer(() -> {
			Object result;
			try {
				result = acquisition.fallbackOrThrow(invocation.getThis(), invocation.getArguments());
			}
			catch (Throwable ex) {
				return Flux.error(ex);
			}
			return (result != null) ? Flux.from((Publisher<?>) result).cast(Object.class) : Flux.empty();
		});
	}

}
