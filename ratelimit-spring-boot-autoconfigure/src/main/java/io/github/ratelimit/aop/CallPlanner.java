package io.github.ratelimit.aop;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.spring.NullKeyPolicy;
import io.github.ratelimit.spring.RateLimitExpressions;
import io.github.ratelimit.spring.RateLimitExpressions.InvalidExpressionException;

/**
 * Evaluates an operation's expressions for one call and checks their values: whether to
 * skip, the key, the cost and the per-call limit before the call, and whether to refund
 * after it. Every error names the method, the attribute, the expression and the value.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class CallPlanner {

	private final RateLimitExpressions expressions;

	private final NullKeyPolicy nullKeyPolicy;

	CallPlanner(RateLimitExpressions expressions, NullKeyPolicy nullKeyPolicy) {
		this.expressions = expressions;
		this.nullKeyPolicy = nullKeyPolicy;
	}

	/**
	 * Plans every operation of a call that applies to it.
	 * @param method the method
	 * @param context the call's context
	 * @return the planned limits in order; empty when the call is not limited
	 */
	List<PlannedLimit> plan(RateLimitedMethod method, EvaluationContext context) {
		List<PlannedLimit> planned = new ArrayList<>(method.operations().size());
		for (RateLimitedOperation operation : method.operations()) {
			PlannedLimit limit = plan(operation, context);
			if (limit != null) {
				planned.add(limit);
			}
		}
		return planned;
	}

	/**
	 * Returns whether {@code refundWhen} asks to give this call's permits back; the
	 * context must hold the outcome already.
	 * @param operation the operation
	 * @param context the call's context
	 * @return {@code true} to refund
	 */
	boolean refundWanted(RateLimitedOperation operation, EvaluationContext context) {
		Expression refundWhen = operation.refundWhen();
		return refundWhen != null && isTrue(refundWhen, context, operation.where("refundWhen"));
	}

	private @Nullable PlannedLimit plan(RateLimitedOperation operation, EvaluationContext context) {
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
		return new PlannedLimit(operation, key, limits, cost);
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
		Long cost = wholeNumber(value);
		if (cost == null || cost < 1) {
			throw new IllegalArgumentException(operation.where("cost") + ": '" + expression.getExpressionString()
					+ "' must evaluate to a whole number >= 1 but was " + describe(value));
		}
		return cost;
	}

	private List<LimitSpec> limits(RateLimitedOperation operation, EvaluationContext context) {
		Expression expression = operation.limit();
		if (expression == null || operation.bucket().limitConfigured()) {
			// Configuration overrides what the code says, limitExpression included.
			return operation.bucket().limits();
		}
		Object value = evaluate(expression, context, operation.where("limitExpression"));
		Long limit = wholeNumber(value);
		if (limit == null || limit < 1) {
			throw new IllegalArgumentException(
					operation.where("limitExpression") + ": '" + expression.getExpressionString()
							+ "' must evaluate to a whole number >= 1 but was " + describe(value));
		}
		return operation.bucket().limitsWith(limit);
	}

	private boolean isTrue(Expression expression, EvaluationContext context, String where) {
		Object value = evaluate(expression, context, where);
		if (value == null || value instanceof Boolean) {
			return Boolean.TRUE.equals(value);
		}
		throw new IllegalArgumentException(where + ": '" + expression.getExpressionString()
				+ "' must evaluate to a boolean but was " + describe(value));
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

	/**
	 * Converts a number or numeric text to a long, when it is whole and fits.
	 * @param value the value
	 * @return the number, or {@code null} when it is not a whole number
	 */
	static @Nullable Long wholeNumber(@Nullable Object value) {
		if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
			return ((Number) value).longValue();
		}
		BigDecimal decimal;
		try {
			if (value instanceof BigDecimal number) {
				decimal = number;
			}
			else if (value instanceof BigInteger number) {
				decimal = new BigDecimal(number);
			}
			else if (value instanceof Double || value instanceof Float) {
				double number = ((Number) value).doubleValue();
				if (!Double.isFinite(number)) {
					return null;
				}
				decimal = BigDecimal.valueOf(number);
			}
			else if (value instanceof CharSequence text) {
				decimal = new BigDecimal(text.toString().trim());
			}
			else {
				return null;
			}
			return decimal.stripTrailingZeros().longValueExact();
		}
		catch (ArithmeticException | NumberFormatException ex) {
			return null;
		}
	}

	private static String describe(@Nullable Object value) {
		if (value == null) {
			return "null";
		}
		String text = (value instanceof CharSequence) ? "'" + value + "'" : String.valueOf(value);
		return text + " (" + value.getClass().getSimpleName() + ")";
	}

}
