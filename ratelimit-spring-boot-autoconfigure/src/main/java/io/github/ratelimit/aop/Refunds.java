package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.spring.RateLimitService;

/**
 * Gives permits back: those taken from earlier buckets when a later one rejects (so
 * repeated annotations are all-or-nothing), and those whose {@code refundWhen} says so
 * after the call. A refund that fails is logged and otherwise ignored: the call's own
 * outcome matters more than a permit.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class Refunds {

	private static final Log logger = LogFactory.getLog(Refunds.class);

	private final RateLimitService service;

	private final CallPlanner planner;

	private final Executor executor;

	Refunds(RateLimitService service, CallPlanner planner, Executor executor) {
		this.service = service;
		this.planner = planner;
		this.executor = executor;
	}

	/**
	 * Gives back every permit taken, after a later bucket rejected the call.
	 * @param permits the permits taken so far
	 */
	void rollback(List<Permit> permits) {
		refund(permits);
	}

	/**
	 * Like {@link #rollback(List)}, on the executor (the store call may block, and the
	 * caller may be a store's I/O thread).
	 * @param permits the permits taken so far
	 * @return a stage that completes once done
	 */
	CompletionStage<Void> rollbackAsync(List<Permit> permits) {
		if (permits.stream().noneMatch(Permit::refundable)) {
			return CompletableFuture.completedFuture(null);
		}
		List<Permit> copy = List.copyOf(permits);
		return CompletableFuture.runAsync(() -> refund(copy), this.executor);
	}

	/**
	 * Evaluates {@code refundWhen} on the call's outcome and refunds what it asks for.
	 * @param permits the call's permits
	 * @param context the call's context
	 * @param result what the method returned
	 * @param exception what it threw, or {@code null}
	 * @throws RuntimeException when a {@code refundWhen} cannot be evaluated
	 */
	void afterCall(List<Permit> permits, RateLimitedEvaluationContext context, @Nullable Object result,
			@Nullable Throwable exception) {
		refund(wanted(permits, context, result, exception));
	}

	/**
	 * Like {@link #afterCall}, with the store calls on the executor.
	 * @param permits the call's permits
	 * @param context the call's context
	 * @param result the value the stage or publisher completed with
	 * @param exception its failure, or {@code null}
	 * @return a stage that completes once done, or fails when a {@code refundWhen} cannot
	 * be evaluated
	 */
	CompletionStage<Void> afterCallAsync(List<Permit> permits, RateLimitedEvaluationContext context,
			@Nullable Object result, @Nullable Throwable exception) {
		List<Permit> wanted;
		try {
			wanted = wanted(permits, context, result, exception);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (wanted.isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		return CompletableFuture.runAsync(() -> refund(wanted), this.executor);
	}

	private List<Permit> wanted(List<Permit> permits, RateLimitedEvaluationContext context, @Nullable Object result,
			@Nullable Throwable exception) {
		List<Permit> wanted = new ArrayList<>(permits.size());
		context.setOutcome(result, exception);
		for (Permit permit : permits) {
			if (this.planner.refundWanted(permit.planned().operation(), context)) {
				wanted.add(permit);
			}
		}
		return wanted;
	}

	private void refund(List<Permit> permits) {
		for (Permit permit : permits) {
			if (!permit.refundable()) {
				continue;
			}
			PlannedLimit planned = permit.planned();
			try {
				this.service.refund(planned.operation().bucket(), planned.key(), planned.limits(), planned.cost());
			}
			catch (RuntimeException ex) {
				logger.warn("Could not give back " + planned.cost() + " permit(s) of bucket '"
						+ planned.operation().bucket().name() + "'", ex);
			}
		}
	}

}
