package io.github.ratelimit.aop;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.aop.operation.FallbackMethod;
import io.github.ratelimit.aop.operation.RateLimitedOperation;

/**
 * The operations that apply to one call (those not skipped, with a key) and what each
 * asks the acquirer for: {@code requests().get(i)} is what {@code operations().get(i)}
 * asks.
 *
 * @param operations the operations, in declaration order
 * @param requests their requests, in the same order
 * @author ratelimit-spring-boot-starter authors
 */
record CallPlan(List<RateLimitedOperation> operations, List<PermitRequest> requests) {

	/**
	 * Returns whether no operation limits this call.
	 * @return {@code true} when the call runs unlimited
	 */
	boolean isEmpty() {
		return this.requests.isEmpty();
	}

	/**
	 * Returns whether the operation that rejected a call has a fallback method.
	 * @param acquisition the rejected acquisition
	 * @return {@code true} when {@link #fallbackOrThrow} calls a fallback
	 */
	boolean hasFallback(Acquisition acquisition) {
		return this.operations.get(acquisition.results().size() - 1).fallback() != null;
	}

	/**
	 * Handles a rejection: calls the rejecting operation's fallback method, or throws.
	 * @param acquisition the rejected acquisition, whose last result is the rejecting
	 * operation's
	 * @param target the bean (not the proxy, so the fallback is not limited itself)
	 * @param arguments the arguments of the call
	 * @return what the fallback returns
	 * @throws RateLimitExceededException when the operation has no fallback
	 * @throws Throwable what the fallback throws
	 */
	@Nullable Object fallbackOrThrow(Acquisition acquisition, @Nullable Object target, @Nullable Object[] arguments)
			throws Throwable {
		RateLimitExceededException exception = acquisition.exception();
		FallbackMethod fallback = this.operations.get(acquisition.results().size() - 1).fallback();
		if (fallback == null) {
			throw exception;
		}
		return fallback.invoke(target, arguments, exception);
	}

}
