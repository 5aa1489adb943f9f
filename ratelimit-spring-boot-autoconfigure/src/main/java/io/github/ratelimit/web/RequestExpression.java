package io.github.ratelimit.web;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.util.StringUtils;

import io.github.ratelimit.expression.RateLimitExpressions;

/**
 * One SpEL expression of a filter rule, parsed at startup and evaluated per request with
 * the request as {@code #request} and beans as {@code @name}.
 * <p>
 * An expression that only reads a getter of the request type, such as
 * {@code #request.remoteAddr} on an {@code HttpServletRequest} (the usual key: the
 * client's address), is read by calling that getter, since evaluating it through SpEL
 * costs more than the rate limit decision itself. SpEL would call the same getter: it
 * resolves the property to the {@code get} method of the request's class, which
 * implements the type's. If the getter throws, the expression is evaluated through SpEL
 * after all, so that it fails with SpEL's error.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RequestExpression {

	/** {@code #request.<property>}, as SpEL's tokenizer reads identifiers. */
	private static final Pattern REQUEST_PROPERTY = Pattern.compile("#request\\.([A-Za-z_$][A-Za-z0-9_$]*)");

	private final Expression expression;

	private final String where;

	private final RateLimitExpressions expressions;

	private final @Nullable Method getter;

	private RequestExpression(Expression expression, String where, RateLimitExpressions expressions,
			@Nullable Method getter) {
		this.expression = expression;
		this.where = where;
		this.expressions = expressions;
		this.getter = getter;
	}

	/**
	 * Parses an expression.
	 * @param text the SpEL text
	 * @param where the property it is configured in, for messages, e.g.
	 * {@code ratelimit.filter.rules[0].key}
	 * @param expressions parses and evaluates SpEL
	 * @param requestType the type of the request object
	 * @return the parsed expression
	 * @throws RateLimitExpressions.InvalidExpressionException naming {@code where} and
	 * the expression
	 * @throws InvalidFilterRuleException when it reads a property or method the request
	 * type does not have
	 */
	static RequestExpression parse(String text, String where, RateLimitExpressions expressions, Class<?> requestType) {
		Expression expression = expressions.parse(text, where);
		RequestProperties.check(expression, where, requestType);
		return new RequestExpression(expression, where, expressions, getter(text.trim(), requestType));
	}

	/**
	 * Evaluates the expression for a request.
	 * @param request the request
	 * @return the value, possibly {@code null}
	 * @throws RateLimitExpressions.InvalidExpressionException naming the property and the
	 * expression when evaluation fails
	 */
	@Nullable Object value(Object request) {
		if (this.getter != null) {
			try {
				return this.getter.invoke(request);
			}
			catch (IllegalAccessException | InvocationTargetException ex) {
				// Fall through to SpEL, for its error.
			}
		}
		StandardEvaluationContext context = this.expressions.context(null);
		context.setVariable("request", request);
		return this.expressions.evaluate(this.expression, context, this.where);
	}

	/**
	 * Returns the expression text, for messages.
	 * @return the text
	 */
	String text() {
		return this.expression.getExpressionString();
	}

	/**
	 * Returns the public no-argument method of the request type that
	 * {@code #request.<property>} reads, or {@code null} for any other expression. Only
	 * the first name SpEL tries ({@code get} and the JavaBeans suffix, see
	 * {@code ReflectivePropertyAccessor#getPropertyMethodSuffix}): a request class has a
	 * method of that name whenever the interface does, so SpEL is certain to find the
	 * same one.
	 */
	private static @Nullable Method getter(String text, Class<?> requestType) {
		Matcher matcher = REQUEST_PROPERTY.matcher(text);
		if (!matcher.matches()) {
			return null;
		}
		String property = matcher.group(1);
		String suffix = (property.length() > 1 && Character.isUpperCase(property.charAt(1))) ? property
				: StringUtils.capitalize(property);
		try {
			Method method = requestType.getMethod("get" + suffix);
			return (method.getReturnType() != void.class) ? method : null;
		}
		catch (NoSuchMethodException ex) {
			return null;
		}
	}

}
