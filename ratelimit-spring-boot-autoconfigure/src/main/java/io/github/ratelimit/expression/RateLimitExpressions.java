package io.github.ratelimit.expression;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

import io.github.ratelimit.InvalidRateLimitConfigurationException;

/**
 * Parses the SpEL of annotations and filter rules once, at startup, and evaluates it per
 * call. Errors name where the expression is written and the expression itself.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitExpressions {

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final Map<String, Expression> parsed = new ConcurrentHashMap<>();

	private final @Nullable BeanFactoryResolver beanResolver;

	private final List<PropertyAccessor> propertyAccessors = List.of(new CachingPropertyAccessor());

	/**
	 * Creates the expression support.
	 * @param beanFactory resolves {@code @beanName} references, or {@code null} for none
	 */
	public RateLimitExpressions(@Nullable BeanFactory beanFactory) {
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	/**
	 * Parses an expression, or returns the one already parsed from the same text.
	 * @param expression the SpEL text
	 * @param where what the expression belongs to, for messages, e.g.
	 * {@code @RateLimited(key) on LoginService.login(String, String)}
	 * @return the parsed expression
	 * @throws InvalidExpressionException naming {@code where} and the expression
	 */
	public Expression parse(String expression, String where) {
		Expression cached = this.parsed.get(expression);
		if (cached != null) {
			return cached;
		}
		try {
			Expression result = this.parser.parseExpression(expression);
			this.parsed.put(expression, result);
			return result;
		}
		catch (ParseException | IllegalStateException ex) {
			throw new InvalidExpressionException(
					"Invalid SpEL in " + where + ": '" + expression + "': " + ex.getMessage(), where, expression, ex);
		}
	}

	/**
	 * Creates an evaluation context with {@code @beanName} references.
	 * @param root the root object, or {@code null}
	 * @return the context; add variables with {@code setVariable}
	 */
	public StandardEvaluationContext context(@Nullable Object root) {
		StandardEvaluationContext context = new StandardEvaluationContext(root);
		// A shared accessor keeps its per-class caches: a fresh one per context would
		// look up Class.getMethods() on every request.
		context.setPropertyAccessors(this.propertyAccessors);
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		return context;
	}

	/**
	 * Evaluates an expression, naming {@code where} and the expression if it throws.
	 * @param expression the parsed expression
	 * @param context the context
	 * @param where what the expression belongs to, for messages
	 * @return the value, possibly {@code null}
	 * @throws InvalidExpressionException when evaluation fails
	 */
	public @Nullable Object evaluate(Expression expression, EvaluationContext context, String where) {
		try {
			return expression.getValue(context);
		}
		catch (EvaluationException ex) {
			throw new InvalidExpressionException(
					"SpEL '" + expression.getExpressionString() + "' in " + where + " failed: " + ex.getMessage(),
					where, expression.getExpressionString(), ex);
		}
	}

	/**
	 * Returns whether an expression reads a variable, so that a value that costs work
	 * (such as {@code #clientIp}) is worked out only for expressions that read it.
	 * @param expression the parsed expression
	 * @param name the variable's name, without {@code #}
	 * @return {@code true} when the expression refers to {@code #name}
	 */
	public static boolean readsVariable(Expression expression, String name) {
		if (expression instanceof SpelExpression spel) {
			return readsVariable(spel.getAST(), "#" + name);
		}
		return expression.getExpressionString().contains("#" + name);
	}

	private static boolean readsVariable(SpelNode node, String reference) {
		if (node instanceof VariableReference && reference.equals(node.toStringAST())) {
			return true;
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			if (readsVariable(node.getChild(i), reference)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Checks the permits a call or request takes, written as a number or given by an
	 * expression: the one rule for the cost of an annotation and of a filter rule.
	 * @param value the number or its text, or what the expression gave
	 * @return the cost, at least 1
	 * @throws IllegalArgumentException whose message is the problem alone (e.g.
	 * {@code must be a whole number of at least 1 but was 0 (Long)}, or
	 * {@code '0' (String)} for text), for the caller to put after its name of the cost
	 */
	public static long cost(@Nullable Object value) {
		Long cost = wholeNumber(value);
		if (cost == null || cost < 1) {
			throw new IllegalArgumentException("must be a whole number of at least 1 but was " + describe(value));
		}
		return cost;
	}

	/**
	 * Describes a value an expression gave, for messages: with its type, and text quoted,
	 * so that {@code '3'} and {@code 3} can be told apart.
	 * @param value the value
	 * @return e.g. {@code '3' (String)}, {@code 3 (Long)} or {@code null}
	 */
	public static String describe(@Nullable Object value) {
		if (value == null) {
			return "null";
		}
		String text = (value instanceof CharSequence) ? "'" + value + "'" : String.valueOf(value);
		return text + " (" + value.getClass().getSimpleName() + ")";
	}

	/**
	 * Converts what a cost or limit expression gave to a whole number: any integral
	 * number, a decimal or numeric text without a fractional part ({@code 3.0},
	 * {@code " 2 "}).
	 * @param value the value
	 * @return the number, or {@code null} when it is not a whole number that fits a long
	 */
	public static @Nullable Long wholeNumber(@Nullable Object value) {
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

	/**
	 * A SpEL expression that cannot be parsed or evaluated.
	 */
	public static final class InvalidExpressionException extends InvalidRateLimitConfigurationException {

		private static final long serialVersionUID = 1L;

		private final String where;

		private final String expression;

		InvalidExpressionException(String message, String where, String expression, Throwable cause) {
			super(message, cause);
			this.where = where;
			this.expression = expression;
		}

		/**
		 * Returns where the expression is written, e.g.
		 * {@code ratelimit.filter.rules[0].key} or
		 * {@code @RateLimited(key) on LoginService.login(String, String)}.
		 * @return the place
		 */
		@Override
		public String getWhere() {
			return this.where;
		}

		/**
		 * Returns how to fix it: what an expression written there can read.
		 * @return the action
		 */
		@Override
		public String getAction() {
			if (this.where.startsWith("ratelimit.")) {
				return "Correct " + this.where + ": SpEL that sees the request as #request (e.g. "
						+ "#request.getHeader('X-Api-Key')), the client's address as #clientIp and beans as @name.";
			}
			return "Correct the expression of " + this.where + ": SpEL that sees the method's arguments by name "
					+ "(e.g. #username), #args, #request, #clientIp, #principal and beans as @name.";
		}

		/**
		 * Returns the expression text.
		 * @return the expression
		 */
		public String getExpression() {
			return this.expression;
		}

	}

}
