package io.github.ratelimit.aop;

import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import io.github.ratelimit.InvalidLimitSpecException;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Acquisition;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.aop.operation.RateLimitedMethod;
import io.github.ratelimit.aop.operation.RateLimitedOperation;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.expression.RateLimitExpressions.InvalidExpressionException;

/**
 * Evaluates an operation's expressions for one call and checks their values: whether to
 * skip, the key, the cost and the per-call limit before the call, and whether to refund
 * and what to settle after it. Every error names the method, the attribute, the
 * expression and the value.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class CallPlanner {

	private static final Log logger = LogFactory.getLog(CallPlanner.class);

	private final RateLimitExpressions expressions;

	private final NullKeyPolicy nullKeyPolicy;

	/** The problems of {@code settle} expressions logged so far, one line each. */
	private final Set<String> warned = ConcurrentHashMap.newKeySet();

	CallPlanner(RateLimitExpressions expressions, NullKeyPolicy nullKeyPolicy) {
		this.expressions = expressions;
		this.nullKeyPolicy = nullKeyPolicy;
	}

	/**
	 * Plans every operation of a call that applies to it.
	 * @param method the method
	 * @param context the call's context
	 * @return the plan; empty when the call is not limited
	 */
	CallPlan plan(RateLimitedMethod method, EvaluationContext context) {
		int size = method.operations().size();
		List<RateLimitedOperation> operations = new ArrayList<>(size);
		List<PermitRequest> requests = new ArrayList<>(size);
		for (RateLimitedOperation operation : method.operations()) {
			PermitRequest request = request(operation, context);
			if (request != null) {
				operations.add(operation);
				requests.add(request);
			}
		}
		return new CallPlan(operations, requests);
	}

	/**
	 * Returns the results whose permits {@code refundWhen} asks to give back, given how
	 * the call ended.
	 * @param plan the call's plan
	 * @param acquisition its granted acquisition
	 * @param context the call's context
	 * @param result what the method returned (for a stage or publisher, the value it
	 * completed with)
	 * @param exception what it threw, or {@code null}
	 * @return the results to give back
	 * @throws RuntimeException when a {@code refundWhen} cannot be evaluated
	 */
	List<RateLimitResult> refundsWanted(CallPlan plan, Acquisition acquisition, RateLimitedEvaluationContext context,
			@Nullable Object result, @Nullable Throwable exception) {
		context.setOutcome(result, exception);
		List<RateLimitResult> wanted = new ArrayList<>(plan.operations().size());
		for (int i = 0; i < plan.operations().size(); i++) {
			RateLimitedOperation operation = plan.operations().get(i);
			Expression refundWhen = operation.refundWhen();
			if (refundWhen != null && isTrue(refundWhen, context, operation.where("refundWhen"))) {
				wanted.add(acquisition.results().get(i));
			}
		}
		return wanted;
	}

	/**
	 * Evaluates a {@code settle} or {@code settleOnError}: what the call used. A negative
	 * value settles 0, and a value that is no whole number (or an expression that fails)
	 * keeps the estimate; either is logged once per operation and attribute, as the call
	 * itself succeeded and must not fail for it.
	 * @param operation the operation
	 * @param expression its {@code settle} or {@code settleOnError}
	 * @param attribute the attribute's name, for messages
	 * @param context the call's context, with {@code #result}, {@code #exception} and
	 * {@code #settled} set
	 * @return the permits used, or {@code null} to keep the estimate
	 */
	@Nullable Long settled(RateLimitedOperation operation, Expression expression, String attribute, EvaluationContext context) {
		String where = operation.where(attribute);
		Object value;
		try {
			value = evaluate(expression, context, where);
		}
		catch (RuntimeException ex) {
			warnOnce(where, ex.getMessage() + "; such calls keep their estimate");
			return null;
		}
		Long used = RateLimitExpressions.wholeNumber(value);
		if (used == null) {
			warnOnce(where, "'" + expression.getExpressionString() + "' must evaluate to a whole number but was "
					+ RateLimitExpressions.describe(value) + "; such calls keep their estimate");
			return null;
		}
		if (used < 0) {
			warnOnce(where, "'" + expression.getExpressionString() + "' must not be negative but was " + used
					+ "; such calls settle 0");
			return 0L;
		}
		return used;
	}

	private void warnOnce(String where, String problem) {
		if (this.warned.add(where + problem.replaceAll("-?\\d+", "#"))) {
			logger.warn(where + ": " + problem + " (logged once)");
		}
	}

	private @Nullable PermitRequest request(RateLimitedOperation operation, EvaluationContext context) {
		Expression skipWhen = operation.skipWhen();
		if (skipWhen != null && isTrue(skipWhen, context, operation.where("skipWhen"))) {
			return null;
		}
		String key = key(operation, context);
		if (key == null) {
			return null;
		}
		long cost = cost(operation, context);
		List<LimitSpec> limits = limits(operation, context);
		return new PermitRequest(operation.bucket().bucket(), key, limits, cost, operation.waitPolicy());
	}

	private @Nullable String key(RateLimitedOperation operation, EvaluationContext context) {
		Expression expression = operation.key();
		if (expression == null) {
			return "";
		}
		Object value = evaluate(expression, context, operation.where("key"));
		if (value != null) {
			return (value instanceof String text) ? text : String.valueOf(value);
		}
		if (this.nullKeyPolicy == NullKeyPolicy.SKIP) {
			return null;
		}
		throw new IllegalStateException(operation.where("key") + ": '" + expression.getExpressionString()
				+ "' evaluated to null. Make the expression return a value for every call, or set the null-key"
				+ " policy to skip (ratelimit.null-key=skip) to let such calls through unlimited");
	}

	private long cost(RateLimitedOperation operation, EvaluationContext context) {
		Expression expression = operation.cost();
		if (expression == null) {
			return operation.fixedCost();
		}
		Object value = evaluate(expression, context, operation.where("cost"));
		try {
			return RateLimitExpressions.cost(value);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(
					operation.where("cost") + ": '" + expression.getExpressionString() + "' " + ex.getMessage(), ex);
		}
	}

	private List<LimitSpec> limits(RateLimitedOperation operation, EvaluationContext context) {
		List<LimitSpec> limits = limitsPerCall(operation, context);
		Expression zone = operation.zone();
		return (zone != null) ? inZone(operation, zone, limits, context) : limits;
	}

	/** The limits in the time zone {@code zoneExpression} gives this call. */
	private List<LimitSpec> inZone(RateLimitedOperation operation, Expression expression, List<LimitSpec> limits,
			EvaluationContext context) {
		String where = operation.where("zoneExpression");
		Object value = evaluate(expression, context, where);
		ZoneId zone;
		try {
			zone = (value instanceof ZoneId id) ? id : ZoneId.of(String.valueOf(value).trim());
		}
		catch (DateTimeException ex) {
			throw new IllegalArgumentException(where + ": '" + expression.getExpressionString()
					+ "' must give a time zone (a ZoneId, or an IANA id such as Europe/Berlin) but was "
					+ RateLimitExpressions.describe(value), ex);
		}
		return operation.bucket().limitsIn(limits, zone);
	}

	private List<LimitSpec> limitsPerCall(RateLimitedOperation operation, EvaluationContext context) {
		Expression expression = operation.limit();
		if (expression == null || operation.bucket().limitConfigured()) {
			// Configuration overrides what the code says, limitExpression included.
			return operation.bucket().limits();
		}
		String where = operation.where("limitExpression");
		Object value = evaluate(expression, context, where);
		Long limit = RateLimitExpressions.wholeNumber(value);
		if (limit == null) {
			throw new IllegalArgumentException(where + ": '" + expression.getExpressionString()
					+ "' must evaluate to a whole number but was " + RateLimitExpressions.describe(value));
		}
		try {
			return operation.bucket().limitsWith(limit);
		}
		catch (InvalidLimitSpecException ex) {
			// The limit's own rules, in the words configuration and live changes get.
			String text = "'" + expression.getExpressionString() + "'";
			throw new IllegalArgumentException(where + ": "
					+ (ex.getField().equals("limit") ? text + " "
							: text + " gave limit " + limit + ", with which " + ex.getField() + " ")
					+ ex.getProblem(), ex);
		}
	}

	private boolean isTrue(Expression expression, EvaluationContext context, String where) {
		Object value = evaluate(expression, context, where);
		if (value == null || value instanceof Boolean) {
			return Boolean.TRUE.equals(value);
		}
		throw new IllegalArgumentException(where + ": '" + expression.getExpressionString()
				+ "' must evaluate to a boolean but was " + RateLimitExpressions.describe(value));
	}

	private @Nullable Object evaluate(Expression expression, EvaluationContext context, String where) {
		try {
			return this.expressions.evaluate(expression, context, where);
		}
		catch (InvalidExpressionException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			// SpEL rethrows a method's unchecked exception as is; name the expression, so
			// that the failure can be traced to the annotation.
			throw new IllegalStateException(
					"SpEL '" + expression.getExpressionString() + "' in " + where + " failed: " + ex, ex);
		}
	}

}
