package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.time.Duration;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;

import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;

/**
 * Holds a permit while a {@code Mono}, {@code Flux}, Kotlin {@code Flow} or
 * {@code suspend} call runs: taken when it is subscribed, given back once when it
 * completes, fails or is cancelled. The store calls run on {@code boundedElastic}, never
 * on an event loop. Loaded only with Reactor on the class path.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ReactorConcurrency {

	/** A Kotlin {@code Flow}, held from each collection until it ends. */
	static final String FLOW = "kotlinx.coroutines.flow.Flow";

	private ReactorConcurrency() {
	}

	static boolean handles(Class<?> type) {
		return Mono.class.isAssignableFrom(type) || Flux.class.isAssignableFrom(type);
	}

	/**
	 * Holds a permit while what the method returns runs. A {@code suspend} function's
	 * call comes here as the publisher Spring's AOP proxy makes of it (and awaits); a
	 * {@code Flow} as a {@code Flux}, made a {@code Flow} again.
	 */
	static @Nullable Object limit(ConcurrencyLimiter limiter, String key, Duration maxWait, boolean alsoRateLimited,
			MethodInvocation invocation, Method method) throws Throwable {
		// The method runs now, as without the limit; what it returns runs once a permit
		// is held.
		Object result = KotlinFlows.toPublisher(invocation.proceed());
		if (result == null) {
			return null;
		}
		Mono<ConcurrencyPermit> permit = Mono
			.fromCallable(() -> ConcurrencyLimitedInterceptor.acquire(limiter, key, maxWait, alsoRateLimited))
			.subscribeOn(Schedulers.boundedElastic());
		if (result instanceof Mono<?> mono) {
			return Mono.usingWhen(permit, (held) -> mono, ReactorConcurrency::release, (held, failure) -> release(held),
					ReactorConcurrency::release);
		}
		Flux<?> flux = Flux.from((Publisher<?>) result);
		Flux<?> limited = Flux.usingWhen(permit, (held) -> flux, ReactorConcurrency::release,
				(held, failure) -> release(held), ReactorConcurrency::release);
		if (!method.getReturnType().getName().equals(FLOW) || KotlinDetector.isSuspendingFunction(method)) {
			return limited;
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(method.getReturnType());
		if (adapter == null) {
			throw new IllegalStateException("Cannot hold a permit for " + method
					+ ", which returns a Kotlin Flow, without kotlinx-coroutines-reactor: add "
					+ "org.jetbrains.kotlinx:kotlinx-coroutines-reactor to the application's dependencies");
		}
		return adapter.fromPublisher(limited);
	}

	private static Mono<Void> release(ConcurrencyPermit permit) {
		return Mono.fromRunnable(permit::release).subscribeOn(Schedulers.boundedElastic()).then();
	}

}
