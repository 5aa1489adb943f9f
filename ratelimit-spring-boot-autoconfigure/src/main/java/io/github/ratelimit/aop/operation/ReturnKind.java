package io.github.ratelimit.aop.operation;

import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;

/**
 * How a rate-limited method returns its result, which decides whether it is limited by
 * blocking the caller or by composing on the returned stage or publisher.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public enum ReturnKind {

	/** Any other type: decide, wait and call on the calling thread. */
	BLOCKING,

	/** {@code CompletionStage} or {@code CompletableFuture}. */
	COMPLETION_STAGE,

	/** Reactor {@code Mono}. */
	MONO,

	/** Reactor {@code Flux}. */
	FLUX,

	/**
	 * A Kotlin {@code suspend} function (not returning a {@code Flow}). Spring's AOP
	 * proxy hands it to interceptors as a {@code Mono} of its result, and awaits the
	 * {@code Mono} an interceptor returns: it is limited as a {@code Mono}.
	 */
	SUSPEND,

	/**
	 * A Kotlin {@code Flow}, returned by a plain function, or by a {@code suspend} one
	 * (which Spring's AOP proxy hands to interceptors as a {@code Flux}): limited as a
	 * {@code Flux}, on each collection.
	 */
	FLOW;

	private static final String FLOW_TYPE = "kotlinx.coroutines.flow.Flow";

	/**
	 * Classifies a method by its return type. Compares Reactor and Kotlin types by name,
	 * so that none of their classes is loaded when they are absent. Subtypes are limited
	 * as blocking calls: the interceptor could not return an instance of them.
	 * @param method the method
	 * @return the kind
	 */
	static ReturnKind of(Method method) {
		if (KotlinDetector.isSuspendingFunction(method)) {
			// The Kotlin return type: the JVM method returns Object.
			Class<?> kotlinType = new MethodParameter(method, -1).getParameterType();
			return kotlinType.getName().equals(FLOW_TYPE) ? FLOW : SUSPEND;
		}
		return of(method.getReturnType());
	}

	/**
	 * Classifies a return type, as {@link #of(Method)} does for a method that is not a
	 * {@code suspend} function.
	 * @param returnType the declared return type
	 * @return the kind
	 */
	static ReturnKind of(Class<?> returnType) {
		if (returnType == CompletionStage.class || returnType == CompletableFuture.class) {
			return COMPLETION_STAGE;
		}
		return switch (returnType.getName()) {
			case "reactor.core.publisher.Mono" -> MONO;
			case "reactor.core.publisher.Flux" -> FLUX;
			case FLOW_TYPE -> FLOW;
			default -> BLOCKING;
		};
	}

	/**
	 * Returns whether the method is limited without blocking a thread.
	 * @return {@code true} for stages and publishers
	 */
	public boolean isAsync() {
		return this != BLOCKING;
	}

	/**
	 * Returns whether the method is limited through Reactor.
	 * @return {@code true} for {@code Mono}, {@code Flux}, a {@code suspend} function and
	 * a {@code Flow}
	 */
	public boolean isReactive() {
		return this == MONO || this == FLUX || this == SUSPEND || this == FLOW;
	}

	/**
	 * Returns whether the method gives one value at most, limited as a {@code Mono}.
	 * @return {@code true} for {@code Mono} and a {@code suspend} function
	 */
	public boolean isSingle() {
		return this == MONO || this == SUSPEND;
	}

}
