package io.github.ratelimit.aop.operation;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

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
	FLUX;

	/**
	 * Classifies a return type. Compares Reactor types by name, so that no Reactor class
	 * is loaded when Reactor is absent. Subtypes are limited as blocking calls: the
	 * interceptor could not return an instance of them.
	 * @param returnType the declared return type
	 * @return the kind
	 */
	static ReturnKind of(Class<?> returnType) {
		if (returnType == CompletionStage.class || returnType == CompletableFuture.class) {
			return COMPLETION_STAGE;
		}
		if (returnType.getName().equals("reactor.core.publisher.Mono")) {
			return MONO;
		}
		if (returnType.getName().equals("reactor.core.publisher.Flux")) {
			return FLUX;
		}
		return BLOCKING;
	}

	/**
	 * Returns whether the method is limited without blocking a thread.
	 * @return {@code true} for stages and publishers
	 */
	public boolean isAsync() {
		return this != BLOCKING;
	}

	/**
	 * Returns whether the method returns a Reactor publisher.
	 * @return {@code true} for {@code Mono} and {@code Flux}
	 */
	public boolean isReactive() {
		return this == MONO || this == FLUX;
	}

}
