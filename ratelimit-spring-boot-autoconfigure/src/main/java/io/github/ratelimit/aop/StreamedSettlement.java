package io.github.ratelimit.aop;

import org.jspecify.annotations.Nullable;
import org.springframework.expression.Expression;

import io.github.ratelimit.aop.operation.RateLimitedOperation;

/**
 * What the elements of one subscription to a {@code Flux} settle, per operation: each
 * element is {@code #result} of the operation's {@code settle}, and the values add up
 * (e.g. the tokens of each chunk of a streamed completion). Elements arrive one at a time
 * (Reactive Streams), so no lock is needed; the sums are read once the stream ends.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class StreamedSettlement {

	private final CallPlanner planner;

	private final CallPlan plan;

	private final RateLimitedEvaluationContext context;

	private final long[] sums;

	/** Operations an element could not be settled for: they keep their estimate. */
	private final boolean[] failed;

	StreamedSettlement(CallPlanner planner, CallPlan plan, RateLimitedEvaluationContext context) {
		this.planner = planner;
		this.plan = plan;
		this.context = context;
		this.sums = new long[plan.operations().size()];
		this.failed = new boolean[this.sums.length];
	}

	/**
	 * Adds what one element settles.
	 * @param element the element
	 */
	void add(Object element) {
		this.context.setOutcome(element, null);
		for (int i = 0; i < this.sums.length; i++) {
			RateLimitedOperation operation = this.plan.operations().get(i);
			Expression settle = operation.settle();
			if (settle == null || this.failed[i]) {
				continue;
			}
			Long used = this.planner.settled(operation, settle, "settle", this.context);
			if (used == null) {
				this.failed[i] = true;
			}
			else {
				long sum = this.sums[i] + used;
				this.sums[i] = (sum < 0) ? Long.MAX_VALUE : sum;
			}
		}
	}

	/**
	 * Returns what the elements settled for one operation.
	 * @param index the operation's position in the plan
	 * @return the sum, or {@code null} when the operation does not settle or an element
	 * could not be settled (the reservation then keeps its estimate)
	 */
	@Nullable Long sum(int index) {
		return (this.plan.operations().get(index).settle() == null || this.failed[index]) ? null : this.sums[index];
	}

}
