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
 * the variables of its request stack ({@link RequestVariables}: {@code #request},
 * {@code #clientIp}, ...) and beans as {@code @name}.
 * <p>
 * An expression that only reads a getter of the request type, such as
 * {@code #request.remoteAddr} on an {@code HttpServletRequest} (the usual key: the
 * client's address), is read by calling that getter, since evaluating it through SpEL
 * costs more than the rate limit decision itself. SpEL would call the same getter: it
 * resolves the property to the {@code get} method of the request's class, which
 * implements the type's. The same goes for a method of the request type called with one
 * text literal, such as {@code #request.getHeader('X-Api-Key')} (the usual key of an
 * API): SpEL finds that method, an exact match for a text argument, on the request's
 * class. If the method throws, the expression is evaluated through SpEL after all, so
 * that it fails with SpEL's error. {@code #clientIp} alone is read the same way, from the
 * stack, and worked out only for expressions that read it.
 * <p>
 * {@code #request.<property>} naming a property the request type lacks and the stack
 * knows to be a mistake fails at startup, with the stack's hint: on a reactive request,
 * {@code #request.remoteAddr} copied from a servlet example would otherwise fail on every
 * request. Other properties are left to SpEL, since a wrapped request may have more
 * getters than its type.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RequestExpression {

	/** {@code #request.<property>}, as SpEL's tokenizer reads identifiers. */
	private static final Pattern REQUEST_PROPERTY = Pattern.compile("#request\\.([A-Za-z_$][A-Za-z0-9_$]*)");

	/**
	 * {@code #request.<method>('<text>')}: a text literal without quotes in it, which
	 * SpEL reads as it is written.
	 */
	private static final Pattern REQUEST_METHOD_OF_TEXT = Pattern
		.compile("#request\\.([A-Za-z_$][A-Za-z0-9_$]*)\\(\\s*'([^']*)'\\s*\\)");

	private static final Object[] NO_ARGUMENTS = {};

	private static final String CLIENT_IP = "#" + RequestVariables.CLIENT_IP;

	private final Expression expression;

	private final String where;

	private final RateLimitExpressions expressions;

	private final RequestVariables variables;

	private final @Nullable Method getter;

	/** What {@link #getter} is called with. */
	private final Object[] arguments;

	private final boolean clientIpOnly;

	private final boolean readsClientIp;

	private RequestExpression(Expression expression, String where, RateLimitExpressions expressions,
			RequestVariables variables, @Nullable Method getter, Object[] arguments) {
		this.expression = expression;
		this.where = where;
		this.expressions = expressions;
		this.variables = variables;
		this.getter = getter;
		this.arguments = arguments;
		this.clientIpOnly = CLIENT_IP.equals(expression.getExpressionString().trim());
		this.readsClientIp = RateLimitExpressions.readsVariable(expression, RequestVariables.CLIENT_IP);
	}

	/**
	 * Parses an expression.
	 * @param text the SpEL text
	 * @param where the property it is configured in, for messages, e.g.
	 * {@code ratelimit.filter.rules[0].key}
	 * @param expressions parses and evaluates SpEL
	 * @param variables what the expression sees of a request
	 * @return the parsed expression
	 * @throws RateLimitExpressions.InvalidExpressionException naming {@code where} and
	 * the expression
	 * @throws InvalidFilterRuleException when it reads a property or method the request
	 * type does not have
	 */
	static RequestExpression parse(String text, String where, RateLimitExpressions expressions,
			RequestVariables variables) {
		Expression expression = expressions.parse(text, where);
		// First what is known to be another stack's way (with its hint), then any name
		// the request does not offer.
		Method getter = getter(text.trim(), where, variables);
		RequestProperties.check(expression, where, variables.requestType());
		if (getter != null) {
			return new RequestExpression(expression, where, expressions, variables, getter, NO_ARGUMENTS);
		}
		Matcher call = REQUEST_METHOD_OF_TEXT.matcher(text.trim());
		Method method = call.matches() ? methodOfText(variables.requestType(), call.group(1)) : null;
		Object[] arguments = (method != null) ? new Object[] { call.group(2) } : NO_ARGUMENTS;
		return new RequestExpression(expression, where, expressions, variables, method, arguments);
	}

	/**
	 * Evaluates the expression for a request.
	 * @param exchange the filter's object for the request
	 * @return the value, possibly {@code null}
	 * @throws RateLimitExpressions.InvalidExpressionException naming the property and the
	 * expression when evaluation fails
	 */
	@Nullable Object value(Object exchange) {
		if (this.getter != null) {
			try {
				return this.getter.invoke(this.variables.request(exchange), this.arguments);
			}
			catch (IllegalAccessException | InvocationTargetException ex) {
				// Fall through to SpEL, for its error.
			}
		}
		if (this.clientIpOnly) {
			return this.variables.clientIp(exchange);
		}
		StandardEvaluationContext context = this.expressions.context(null);
		this.variables.bind(exchange, context);
		if (this.readsClientIp) {
			context.setVariable(RequestVariables.CLIENT_IP, this.variables.clientIp(exchange));
		}
		return this.expressions.evaluate(this.expression, context, this.where);
	}

	/**
	 * Returns whether the expression is read by calling a method of the request, without
	 * SpEL.
	 * @return {@code true} for a getter or a method called with one text literal
	 */
	boolean readsDirectly() {
		return this.getter != null;
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
	private static @Nullable Method getter(String text, String where, RequestVariables variables) {
		Matcher matcher = REQUEST_PROPERTY.matcher(text);
		if (!matcher.matches()) {
			return null;
		}
		Class<?> requestType = variables.requestType();
		String property = matcher.group(1);
		String suffix = (property.length() > 1 && Character.isUpperCase(property.charAt(1))) ? property
				: StringUtils.capitalize(property);
		Method getter = publicMethod(requestType, "get" + suffix);
		if (getter != null && getter.getReturnType() != void.class) {
			return getter;
		}
		String hint = variables.hint(property);
		if (!hint.isEmpty() && publicMethod(requestType, "is" + suffix) == null) {
			// A property known to be missing on this stack (copied from another stack's
			// example) would fail on every request.
			throw new IllegalStateException(where + ": '" + text + "' reads property '" + property + "', which "
					+ requestType.getSimpleName() + " does not have; " + hint);
		}
		return null;
	}

	/**
	 * Returns the public method {@code name(String)} of the request type, or {@code null}
	 * when it has none or it returns nothing.
	 */
	private static @Nullable Method methodOfText(Class<?> requestType, String name) {
		Method method = publicMethod(requestType, name, String.class);
		return (method != null && method.getReturnType() != void.class) ? method : null;
	}

	private static @Nullable Method publicMethod(Class<?> type, String name, Class<?>... parameterTypes) {
		try {
			return type.getMethod(name, parameterTypes);
		}
		catch (NoSuchMethodException ex) {
			return null;
		}
	}

}
