package io.github.ratelimit.aop;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

import org.springframework.util.ClassUtils;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitObserver;
import io.github.ratelimit.aop.operation.RateLimitedMethod;
import io.github.ratelimit.aop.operation.ReturnKind;
import io.github.ratelimit.concurrency.ConcurrencyPermit;

/**
 * Limits methods returning {@code Mono} or {@code Flux}, Kotlin {@code suspend} functions
 * (as a {@code Mono}: see {@link ReturnKind#SUSPEND}) and functions returning a Kotlin
 * {@code Flow} (as a {@code Flux}). The method runs when called and assembles its
 * publisher, as usual; each subscription to the returned publisher first takes its
 * permits (without blocking: decisions and waits are stages), then subscribes to the
 * method's publisher, or fails with the rejection, or switches to the fallback.
 * {@code refundWhen} and {@code settle} see a {@code Mono}'s value as {@code #result};
 * for a {@code Flux}, {@code settle} sees each element and its values add up (settled
 * when the stream completes, fails or is cancelled), and {@code refundWhen} sees
 * {@code #result} {@code null}: only {@code #exception} tells how it ended.
 * <p>
 * The only class of the interceptor that uses Reactor; created only when Reactor is on
 * the classpath.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ReactorRateLimiting {

	private static final boolean REACTIVE_WEB_PRESENT = ClassUtils.isPresent(
			"org.springframework.web.filter.reactive.ServerWebExchangeContextFilter",
			ReactorRateLimiting.class.getClassLoader());

	/** Where the store calls that take and give back concurrency permits run. */
	private static final Executor BLOCKING_CALLS = (call) -> Schedulers.boundedElastic().schedule(call);

	private final Acquirer acquirer;

	private final AfterCall afterCall;

	ReactorRateLimiting(Acquirer acquirer, AfterCall afterCall) {
		this.acquirer = acquirer;
		this.afterCall = afterCall;
		KotlinFlows.initialize(ReactorRateLimiting.class.getClassLoader());
	}

	/**
	 * Limits a call.
	 * @param invocation the call
	 * @param method its limits
	 * @param plan the call's plan (not empty)
	 * @param context the call's context
	 * @param claim the concurrency permit to take with the decision, or {@code null}
	 * @return the limited {@code Mono} or {@code Flux}
	 * @throws Throwable what the method throws when called
	 */
	Object invoke(MethodInvocation invocation, RateLimitedMethod method, CallPlan plan,
			RateLimitedEvaluationContext context, @Nullable ConcurrencyClaim claim) throws Throwable {
		Object limited = limit(invocation, KotlinFlows.toPublisher(invocation.proceed()), method, plan, context, claim);
		return method.returnKind().isSingle() ? limited : KotlinFlows.asReturned(method, (Flux<?>) limited);
	}

	/**
	 * Returns whether {@link #invokePlanningOnSubscribe} can find a WebFlux request.
	 * @return {@code true} when Spring's reactive web classes are present
	 */
	boolean findsReactiveRequests() {
		return REACTIVE_WEB_PRESENT;
	}

	/**
	 * Limits a call whose expressions read the WebFlux request: the method runs when
	 * called, as usual; each subscription evaluates the expressions with
	 * {@code #exchange} and {@code #request} from its subscriber's context, where the
	 * request's filter chain put the exchange, then limits as {@link #invoke} does.
	 * @param invocation the call
	 * @param method its limits
	 * @param planner evaluates the expressions
	 * @param contexts a fresh evaluation context of the call per subscription
	 * @param claim the concurrency permit to take with the decision, or {@code null}
	 * @return the limited {@code Mono} or {@code Flux}
	 * @throws Throwable what the method throws when called
	 */
	Object invokePlanningOnSubscribe(MethodInvocation invocation, RateLimitedMethod method, CallPlanner planner,
			Supplier<RateLimitedEvaluationContext> contexts, @Nullable ConcurrencyClaim claim) throws Throwable {
		Object returned = KotlinFlows.toPublisher(invocation.proceed());
		if (method.returnKind().isSingle()) {
			return Mono.deferContextual((subscriber) -> Mono
				.from(planned(invocation, returned, method, planner, contexts, subscriber, claim)));
		}
		return KotlinFlows.asReturned(method, Flux.deferContextual(
				(subscriber) -> planned(invocation, returned, method, planner, contexts, subscriber, claim)));
	}

	private Publisher<?> planned(MethodInvocation invocation, @Nullable Object returned, RateLimitedMethod method,
			CallPlanner planner, Supplier<RateLimitedEvaluationContext> contexts, ContextView subscriber,
			@Nullable ConcurrencyClaim claim) {
		RateLimitedEvaluationContext context = contexts.get();
		ReactiveExchanges.bind(subscriber, context);
		CallPlan plan;
		try {
			plan = planner.plan(method, context);
		}
		catch (RuntimeException ex) {
			return Flux.error(ex);
		}
		if (plan.isEmpty() && claim == null) {
			return (returned != null) ? (Publisher<?>) returned : Flux.empty();
		}
		return (Publisher<?>) limit(invocation, returned, method, plan, context, claim);
	}

	private Object limit(MethodInvocation invocation, @Nullable Object returned, RateLimitedMethod method,
			CallPlan plan, RateLimitedEvaluationContext context, @Nullable ConcurrencyClaim claim) {
		Mono<ConcurrencyClaim.Held> acquired = ((claim != null) ? acquireHolding(plan.requests(), claim)
				: acquire(plan.requests()))
			.transformDeferredContextual((held, subscriber) -> reportTo(subscriber, held));
		if (method.returnKind().isSingle()) {
			// A suspend function's publisher is a Mono too (Spring's AOP proxy makes it).
			Mono<Object> source = (returned != null) ? Mono.from((Publisher<?>) returned).cast(Object.class)
					: Mono.empty();
			return acquired.flatMap((held) -> held.acquisition().granted()
					? whileHeld(held, withRefunds(source, method, plan, held.acquisition(), context))
					: Mono.from(fallback(invocation, plan, held.acquisition())));
		}
		Flux<Object> source = (returned != null) ? Flux.from((Publisher<?>) returned).cast(Object.class) : Flux.empty();
		return acquired.flatMapMany((held) -> held.acquisition().granted()
				? whileHeld(held, withRefunds(source, method, plan, held.acquisition(), context))
				: fallback(invocation, plan, held.acquisition()));
	}

	private Mono<ConcurrencyClaim.Held> acquire(List<PermitRequest> requests) {
		// Through handle: Reactor makes the subscriber context's thread locals current
		// around it, even without automatic context propagation, so the caller's
		// observation (the HTTP request's) is the parent of the decision's.
		return Mono.just(requests)
			.<CompletionStage<Acquisition>>handle((toTake, sink) -> sink.next(this.acquirer.acquireAsync(toTake)))
			.flatMap(Mono::fromCompletionStage)
			.map(ConcurrencyClaim.Held::of);
	}

	/**
	 * Takes the claim's permit with the decision, the store calls on
	 * {@code boundedElastic}; a permit taken for a subscriber that cancelled meanwhile is
	 * given back at once rather than when its lease ends.
	 */
	private Mono<ConcurrencyClaim.Held> acquireHolding(List<PermitRequest> requests, ConcurrencyClaim claim) {
		return Mono.just(requests).<CompletableFuture<Acquirer
				.Holding>>handle((toTake, sink) -> sink
					.next(this.acquirer.acquireHoldingAsync(toTake, claim.limiter(), claim.key(), BLOCKING_CALLS)
						.toCompletableFuture()))
			.flatMap((taking) -> {
				AtomicBoolean delivered = new AtomicBoolean();
				return Mono.fromFuture(taking, true)
					.doOnNext((holding) -> delivered.set(true))
					.doOnCancel(() -> taking.thenAccept((holding) -> {
						if (!delivered.get()) {
							holding.permit().release();
						}
					}));
			})
			.map((holding) -> claim.held(holding, this.acquirer));
	}

	/**
	 * Holds the call's permit, if it has one, until what it returned completes, fails or
	 * is cancelled; the release is a store call, so it runs on {@code boundedElastic}.
	 */
	private static <T> Mono<T> whileHeld(ConcurrencyClaim.Held held, Mono<T> call) {
		ConcurrencyPermit permit = held.permit();
		return (permit != null) ? call.doFinally((signal) -> BLOCKING_CALLS.execute(permit::release)) : call;
	}

	private static <T> Flux<T> whileHeld(ConcurrencyClaim.Held held, Flux<T> call) {
		ConcurrencyPermit permit = held.permit();
		return (permit != null) ? call.doFinally((signal) -> BLOCKING_CALLS.execute(permit::release)) : call;
	}

	/**
	 * Tells the call's decisions to the {@link RateLimitObserver} in the subscriber's
	 * context, if any: the WebFlux filter puts one there that adds them to the limit
	 * headers of the response being served.
	 */
	private static Mono<ConcurrencyClaim.Held> reportTo(ContextView subscriber, Mono<ConcurrencyClaim.Held> held) {
		RateLimitObserver observer = subscriber.getOrDefault(RateLimitObserver.class, null);
		if (observer == null) {
			return held;
		}
		return held.doOnNext((acquired) -> acquired.acquisition().results().forEach(observer::onDecision));
	}

	/**
	 * Returns a publisher that fails with {@code failure}, of the method's kind.
	 * @param method the method
	 * @param failure the failure
	 * @return a failed {@code Mono} or {@code Flux}
	 */
	Object error(RateLimitedMethod method, Throwable failure) {
		return method.returnKind().isSingle() ? Mono.error(failure)
				: KotlinFlows.asReturned(method, Flux.error(failure));
	}

	private Mono<Object> withRefunds(Mono<Object> source, RateLimitedMethod method, CallPlan plan,
			Acquisition acquisition, RateLimitedEvaluationContext context) {
		if (!method.actsAfterCall()) {
			return source;
		}
		return source.onErrorResume((failure) -> afterFailure(plan, acquisition, context, failure, null))
			.flatMap((value) -> afterCall(plan, acquisition, context, value, null).thenReturn(value))
			.switchIfEmpty(Mono.defer(() -> afterCall(plan, acquisition, context, null, null).then(Mono.empty())));
	}

	private Flux<Object> withRefunds(Flux<Object> source, RateLimitedMethod method, CallPlan plan,
			Acquisition acquisition, RateLimitedEvaluationContext context) {
		if (!method.actsAfterCall()) {
			return source;
		}
		return Flux.defer(() -> {
			StreamedSettlement streamed = this.afterCall.streamed(plan, context);
			if (streamed == null) {
				return source.onErrorResume((failure) -> afterFailure(plan, acquisition, context, failure, null))
					.concatWith(Mono.defer(() -> afterCall(plan, acquisition, context, null, null)));
			}
			// Settled once: when the stream completes, fails or is cancelled, whichever
			// is first.
			AtomicBoolean ended = new AtomicBoolean();
			return source.doOnNext(streamed::add)
				.onErrorResume((failure) -> ended.compareAndSet(false, true)
						? afterFailure(plan, acquisition, context, failure, streamed) : Mono.error(failure))
				.concatWith(Mono.defer(() -> ended.compareAndSet(false, true)
						? afterCall(plan, acquisition, context, null, streamed) : Mono.empty()))
				.doOnCancel(() -> {
					if (ended.compareAndSet(false, true)) {
						this.afterCall.afterCancel(plan, acquisition, streamed);
					}
				});
		});
	}

	private Mono<Void> afterCall(CallPlan plan, Acquisition acquisition, RateLimitedEvaluationContext context,
			@Nullable Object value, @Nullable StreamedSettlement streamed) {
		return Mono.fromCompletionStage(
				() -> this.afterCall.afterCallAsync(plan, acquisition, context, value, null, streamed));
	}

	private Mono<Object> afterFailure(CallPlan plan, Acquisition acquisition, RateLimitedEvaluationContext context,
			Throwable failure, @Nullable StreamedSettlement streamed) {
		return Mono
			.fromCompletionStage(
					() -> this.afterCall.afterCallAsync(plan, acquisition, context, null, failure, streamed))
			.onErrorResume((refundFailure) -> {
				// The method's own failure is what the subscriber must see.
				failure.addSuppressed(refundFailure);
				return Mono.empty();
			})
			.then(Mono.error(failure));
	}

	private Flux<Object> fallback(MethodInvocation invocation, CallPlan plan, Acquisition acquisition) {
		return Flux.defer(() -> {
			Object result;
			try {
				result = plan.fallbackOrThrow(acquisition, invocation.getThis(), invocation.getArguments());
			}
			catch (Throwable ex) {
				return Flux.error(ex);
			}
			Object publisher = KotlinFlows.toPublisher(result);
			return (publisher != null) ? Flux.from((Publisher<?>) publisher).cast(Object.class) : Flux.empty();
		});
	}

}
