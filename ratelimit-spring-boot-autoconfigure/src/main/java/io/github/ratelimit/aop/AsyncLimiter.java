package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.spring.RateLimitService;

/**
 * Takes the permits of a call without blocking a thread: like {@link BlockingLimiter},
 * but every decision is asynchronous and every wait is a delayed stage, so a method
 * returning a {@code CompletionStage}, {@code Mono} or {@code Flux} never holds its
 * caller.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class AsyncLimiter {

	private final RateLimitService service;

	private final TimeSource clock;

	private final PermitWaiter waiter;

	private final Refunds refunds;

	AsyncLimiter(RateLimitService service, TimeSource clock, PermitWaiter waiter, Refunds refunds) {
		this.service = service;
		this.clock = clock;
		this.waiter = waiter;
		this.refunds = refunds;
	}

	/**
	 * Takes every permit of a call, or none, then waits out any leaky bucket delay.
	 * @param plan the planned limits, in order
	 * @return the acquisition, once the call may proceed (or is rejected)
	 */
	CompletionStage<Acquisition> acquire(List<PlannedLimit> plan) {
		return acquire(plan, 0, new ArrayList<>(plan.size())).thenCompose(this::awaitDelay);
	}

	private CompletionStage<Acquisition> acquire(List<PlannedLimit> plan, int index, List<Permit> permits) {
		if (index == plan.size()) {
			return CompletableFuture.completedFuture(Acquisition.granted(permits));
		}
		PlannedLimit planned = plan.get(index);
		long deadline = planned.operation().deadline(this.clock.nowMicros());
		return decide(planned, deadline).handle((permit, failure) -> {
			if (failure != null) {
				// The store failed: what earlier buckets granted must not count either.
				return this.refunds.rollbackAsync(permits)
					.<Acquisition>thenCompose((done) -> CompletableFuture.failedFuture(failure));
			}
			if (!permit.proceeds()) {
				return this.refunds.rollbackAsync(permits).thenApply((done) -> Acquisition.rejected(permit));
			}
			permits.add(permit);
			return acquire(plan, index + 1, permits);
		}).thenCompose(Function.identity());
	}

	private CompletionStage<Permit> decide(PlannedLimit planned, long deadline) {
		RateLimitedOperation operation = planned.operation();
		long now = this.clock.nowMicros();
		return this.service
			.decideAsync(operation.bucket(), planned.key(), planned.limits(), planned.cost(),
					operation.maxDelay(deadline, now))
			.thenCompose((result) -> {
				Permit permit = new Permit(planned, result, now);
				if (permit.proceeds()) {
					return CompletableFuture.completedFuture(permit);
				}
				long wait = operation.retryWait(result.decision(), deadline - this.clock.nowMicros());
				if (wait < 0) {
					return CompletableFuture.completedFuture(permit);
				}
				return this.waiter.delay(wait).thenCompose((waited) -> decide(planned, deadline));
			});
	}

	private CompletionStage<Acquisition> awaitDelay(Acquisition acquisition) {
		if (!acquisition.granted()) {
			return CompletableFuture.completedFuture(acquisition);
		}
		long proceedAt = acquisition.proceedAtMicros();
		long remaining = (proceedAt != Long.MIN_VALUE) ? proceedAt - this.clock.nowMicros() : 0;
		if (remaining <= 0) {
			return CompletableFuture.completedFuture(acquisition);
		}
		return this.waiter.delay(remaining).thenApply((waited) -> acquisition);
	}

}
