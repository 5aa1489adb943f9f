package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.Expression;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.aop.operation.RateLimitedOperation;

/**
 * Applies what the operations ask for once a call has ended: gives back what
 * {@code refundWhen} asks for, and settles what {@code settle} (or {@code settleOnError})
 * says the call used. An operation refunded is not settled too.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class AfterCall {

	private static final Log logger = LogFactory.getLog(AfterCall.class);

	private final CallPlanner planner;

	private final Acquirer acquirer;

	AfterCall(CallPlanner planner, Acquirer acquirer) {
		this.planner = planner;
		this.acquirer = acquirer;
	}

	/**
	 * Refunds and settles, on the calling thread.
	 * @param plan the call's plan
	 * @param acquisition its granted acquisition
	 * @param context the call's context
	 * @param result what the method returned
	 * @param exception what it threw, or {@code null}
	 * @param streamed what a stream's elements settled, or {@code null} for a call that
	 * returned one value
	 * @throws RuntimeException when a {@code refundWhen} cannot be evaluated
	 */
	void afterCall(CallPlan plan, Acquisition acquisition, RateLimitedEvaluationContext context,
			@Nullable Object result, @Nullable Throwable exception, @Nullable StreamedSettlement streamed) {
		List<RateLimitResult> refunds = this.planner.refundsWanted(plan, acquisition, context, result, exception);
		List<Settlement> settlements = settlements(plan, acquisition, context, exception, streamed, refunds);
		this.acquirer.refund(refunds);
		settle(settlements);
	}

	/**
	 * Like {@link #afterCall}, with the store calls on the acquirer's executor.
	 * @param plan the call's plan
	 * @param acquisition its granted acquisition
	 * @param context the call's context
	 * @param result the value the stage or publisher completed with
	 * @param exception its failure, or {@code null}
	 * @param streamed what a stream's elements settled, or {@code null}
	 * @return a stage that completes once done, or fails when a {@code refundWhen} cannot
	 * be evaluated
	 */
	CompletionStage<Void> afterCallAsync(CallPlan plan, Acquisition acquisition, RateLimitedEvaluationContext context,
			@Nullable Object result, @Nullable Throwable exception, @Nullable StreamedSettlement streamed) {
		List<RateLimitResult> refunds;
		List<Settlement> settlements;
		try {
			refunds = this.planner.refundsWanted(plan, acquisition, context, result, exception);
			settlements = settlements(plan, acquisition, context, exception, streamed, refunds);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (settlements.isEmpty()) {
			return this.acquirer.refundAsync(refunds);
		}
		return this.acquirer.refundAsync(refunds)
			.thenRunAsync(() -> settle(settlements), this.acquirer.waiter().executor());
	}

	/**
	 * Settles a stream its subscriber cancelled: what its elements summed to, as it used
	 * that much; {@code refundWhen} is not asked, as the call neither completed nor
	 * failed.
	 * @param plan the call's plan
	 * @param acquisition its granted acquisition
	 * @param streamed what the stream's elements settled
	 */
	void afterCancel(CallPlan plan, Acquisition acquisition, StreamedSettlement streamed) {
		List<Settlement> settlements = new ArrayList<>();
		for (int i = 0; i < plan.operations().size(); i++) {
			Long sum = streamed.sum(i);
			if (sum != null) {
				settlements.add(new Settlement(acquisition.results().get(i), sum));
			}
		}
		if (!settlements.isEmpty()) {
			this.acquirer.waiter().executor().execute(() -> settle(settlements));
		}
	}

	/**
	 * Starts counting what a stream's elements settle, for the operations with a
	 * {@code settle}.
	 * @param plan the call's plan
	 * @param context the call's context
	 * @return the count, or {@code null} when no operation settles
	 */
	@Nullable StreamedSettlement streamed(CallPlan plan, RateLimitedEvaluationContext context) {
		return plan.operations().stream().anyMatch((operation) -> operation.settle() != null)
				? new StreamedSettlement(this.planner, plan, context) : null;
	}

	private List<Settlement> settlements(CallPlan plan, Acquisition acquisition, RateLimitedEvaluationContext context,
			@Nullable Throwable exception, @Nullable StreamedSettlement streamed, List<RateLimitResult> refunds) {
		List<Settlement> settlements = new ArrayList<>();
		for (int i = 0; i < plan.operations().size(); i++) {
			RateLimitedOperation operation = plan.operations().get(i);
			RateLimitResult reserved = acquisition.results().get(i);
			Expression settle = operation.settle();
			if (settle == null || refunds.contains(reserved)) {
				continue;
			}
			Long used = used(operation, settle, context, exception, streamed, i, reserved.request().cost());
			if (used != null) {
				settlements.add(new Settlement(reserved, used));
			}
		}
		return settlements;
	}

	/**
	 * What one operation's call used, or {@code null} to keep its estimate.
	 */
	private @Nullable Long used(RateLimitedOperation operation, Expression settle, RateLimitedEvaluationContext context,
			@Nullable Throwable exception, @Nullable StreamedSettlement streamed, int index, long estimate) {
		Long sum = (streamed != null) ? streamed.sum(index) : null;
		if (exception == null) {
			return (streamed != null) ? sum : this.planner.settled(operation, settle, "settle", context);
		}
		Expression settleOnError = operation.settleOnError();
		if (settleOnError != null) {
			context.setVariable("settled", sum);
			return this.planner.settled(operation, settleOnError, "settleOnError", context);
		}
		// A failed stream keeps its estimate, or what it used when that is more.
		return (sum != null && sum > estimate) ? sum : null;
	}

	private void settle(List<Settlement> settlements) {
		for (Settlement settlement : settlements) {
			try {
				this.acquirer.settle(settlement.reserved(), settlement.used());
			}
			catch (RuntimeException ex) {
				logger.warn("Could not settle " + settlement.used() + " permit(s) of bucket '"
						+ settlement.reserved().bucket().name() + "' (reserved "
						+ settlement.reserved().request().cost() + "); the reservation stays charged at its estimate",
						ex);
			}
		}
	}

	/** What a call used of one reservation. */
	private record Settlement(RateLimitResult reserved, long used) {
	}

}
