package io.github.ratelimit.aop;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.RateLimitResult;

/**
 * Applies {@code refundWhen} once a call has ended: evaluates it for each operation with
 * the call's outcome, and has the acquirer give back what it asks for.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RefundWhen {

	private final CallPlanner planner;

	private final Acquirer acquirer;

	RefundWhen(CallPlanner planner, Acquirer acquirer) {
		this.planner = planner;
		this.acquirer = acquirer;
	}

	/**
	 * Gives back what {@code refundWhen} asks for, on the calling thread.
	 * @param plan the call's plan
	 * @param acquisition its granted acquisition
	 * @param context the call's context
	 * @param result what the method returned
	 * @param exception what it threw, or {@code null}
	 * @throws RuntimeException when a {@code refundWhen} cannot be evaluated
	 */
	void afterCall(CallPlan plan, Acquisition acquisition, RateLimitedEvaluationContext context,
			@Nullable Object result, @Nullable Throwable exception) {
		this.acquirer.refund(this.planner.refundsWanted(plan, acquisition, context, result, exception));
	}

	/**
	 * Like {@link #afterCall}, with the store calls on the acquirer's executor.
	 * @param plan the call's plan
	 * @param acquisition its granted acquisition
	 * @param context the call's context
	 * @param result the value the stage or publisher completed with
	 * @param exception its failure, or {@code null}
	 * @return a stage that completes once done, or fails when a {@code refundWhen} cannot
	 * be evaluated
	 */
	CompletionStage<Void> afterCallAsync(CallPlan plan, Acquisition acquisition, RateLimitedEvaluationContext context,
			@Nullable Object result, @Nullable Throwable exception) {
		List<RateLimitResult> wanted;
		try {
			wanted = this.planner.refundsWanted(plan, acquisition, context, result, exception);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return this.acquirer.refundAsync(wanted);
	}

}
