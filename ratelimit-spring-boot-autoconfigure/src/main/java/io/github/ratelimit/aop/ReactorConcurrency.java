package io.github.ratelimit.aop;

import java.time.Duration;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;

/**
 * Holds a permit while a {@code Mono} or {@code Flux} runs: taken when it is subscribed,
 * given back once when it completes, fails or is cancelled. The store calls run on
 * {@code boundedElastic}, never on an event loop. Loaded only with Reactor on the class
 * path.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class ReactorConcurrency {

	private ReactorConcurrency() {
	}

	static boolean handles(Class<?> type) {
		return Mono.class.isAssignableFrom(type) || Flux.class.isAssignableFrom(type);
	}

	static @Nullable Object limit(ConcurrencyLimiter limiter, String key, Duration maxWait, MethodInvocation invocation)
			throws Throwable {
		// The method runs now, as without the limit; what it returns runs once a permit
		// is held.
		Object result = invocation.proceed();
		if (result == null) {
			return null;
		}
		Mono<ConcurrencyPermit> permit = Mono
			.fromCallable(() -> ConcurrencyLimitedInterceptor.acquire(limiter, key, maxWait))
			.subscribeOn(Schedulers.boundedElastic());
		if (result instanceof Mono<?> mono) {
			return Mono.usingWhen(permit, (held) -> mono, ReactorConcurrency::release, (held, failure) -> release(held),
					ReactorConcurrency::release);
		}
		Flux<?> flux = (Flux<?>) result;
		return Flux.usingWhen(permit, (held) -> flux, ReactorConcurrency::release, (held, failure) -> release(held),
				ReactorConcurrency::release);
	}

	private static Mono<Void> release(ConcurrencyPermit permit) {
		return Mono.fromRunnable(permit::release).subscribeOn(Schedulers.boundedElastic()).then();
	}

}
