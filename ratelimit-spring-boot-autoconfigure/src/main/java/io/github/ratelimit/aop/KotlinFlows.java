package io.github.ratelimit.aop;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;

import io.github.ratelimit.aop.operation.RateLimitedMethod;
import io.github.ratelimit.aop.operation.ReturnKind;

/**
 * Kotlin {@code Flow}s as Reactor publishers and back, through Spring's
 * {@link ReactiveAdapterRegistry} (whose {@code Flow} adapter needs
 * {@code kotlinx-coroutines-reactor}), so that a {@code Flow} is limited as a
 * {@code Flux}: on each collection.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class KotlinFlows {

	/**
	 * Classes of kotlinx-coroutines whose initializers read files (a
	 * {@code ServiceLoader}) and that Spring's coroutine support first uses when a
	 * limited {@code suspend} function or {@code Flow} is called: on WebFlux, on an event
	 * loop, where BlockHound reports the read (and, in its default mode, fails that first
	 * request).
	 */
	private static final String[] READING_INITIALIZERS = { "kotlinx.coroutines.reactive.ReactiveFlowKt" };

	private KotlinFlows() {
	}

	/**
	 * Initializes, on the calling thread (at startup), what the first limited
	 * {@code suspend} or {@code Flow} call would otherwise initialize on an event loop.
	 * Nothing when kotlinx-coroutines is absent.
	 * @param classLoader the application's class loader
	 */
	static void initialize(@Nullable ClassLoader classLoader) {
		for (String name : READING_INITIALIZERS) {
			try {
				Class.forName(name, true, classLoader);
			}
			catch (ClassNotFoundException | LinkageError ex) {
				// No kotlinx-coroutines-reactive: nothing uses it, nothing to prepare.
			}
		}
	}

	/**
	 * Returns what a method returned as a publisher: a {@code Flow} adapted; anything
	 * else (a publisher, or {@code null}) as it is.
	 */
	static @Nullable Object toPublisher(@Nullable Object returned) {
		if (returned == null || returned instanceof Publisher) {
			return returned;
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(returned.getClass());
		return (adapter != null) ? adapter.toPublisher(returned) : returned;
	}

	/**
	 * Returns the limited {@code Flux} as the method must return it: a plain function
	 * returning a {@code Flow} gets a {@code Flow}; a {@code suspend} one gets the
	 * {@code Flux}, which Spring's AOP proxy turns into a {@code Flow} itself.
	 */
	static Object asReturned(RateLimitedMethod method, Flux<?> limited) {
		if (method.returnKind() != ReturnKind.FLOW || method.suspending()) {
			return limited;
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance()
			.getAdapter(method.method().getReturnType());
		if (adapter == null) {
			throw new IllegalStateException("Cannot limit " + method.description()
					+ ", which returns a Kotlin Flow, without kotlinx-coroutines-reactor: add "
					+ "org.jetbrains.kotlinx:kotlinx-coroutines-reactor to the application's dependencies");
		}
		return adapter.fromPublisher(limited);
	}

}
