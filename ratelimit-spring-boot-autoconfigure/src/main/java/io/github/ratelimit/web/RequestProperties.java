package io.github.ratelimit.web;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.util.StringUtils;

import io.github.ratelimit.expression.NearestNames;

/**
 * Checks, when a filter rule is built, that what an expression reads of {@code #request}
 * exists on the request type: {@code #request.remoteAdr} (a typo) would otherwise pass
 * startup and fail every request. Only the first step after {@code #request} is checked
 * (what follows depends on values), with the names SpEL would resolve: a property has a
 * public {@code get}/{@code is} method or field, a method a public method of that name.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class RequestProperties {

	private RequestProperties() {
	}

	/**
	 * Checks an expression.
	 * @param expression the parsed expression
	 * @param property the property it is configured in, e.g.
	 * {@code ratelimit.filter.rules[0].key}
	 * @param requestType the type of {@code #request}
	 * @throws InvalidFilterRuleException naming the property, the unknown name and the
	 * closest names the request offers
	 */
	static void check(Expression expression, String property, Class<?> requestType) {
		if (expression instanceof SpelExpression spel) {
			check(spel.getAST(), expression.getExpressionString(), property, requestType);
		}
	}

	private static void check(SpelNode node, String text, String property, Class<?> requestType) {
		if (node instanceof CompoundExpression && node.getChildCount() > 1
				&& node.getChild(0) instanceof VariableReference variable
				&& "#request".equals(variable.toStringAST())) {
			SpelNode next = node.getChild(1);
			if (next instanceof PropertyOrFieldReference reference && !isProperty(requestType, reference.getName())) {
				throw unknown(text, property, requestType, "property", reference.getName(), properties(requestType),
						"#request.");
			}
			if (next instanceof MethodReference method && !isMethod(requestType, method.getName())) {
				if (method.getName().equals("getHeader") && isProperty(requestType, "headers")) {
					// WebFlux's request: the servlet form, which the docs' MVC examples
					// use.
					throw unknown(text, property, requestType, "method", "getHeader", List.of("headers.getFirst"),
							"#request.");
				}
				throw unknown(text, property, requestType, "method", method.getName(), methods(requestType),
						"#request.");
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			check(node.getChild(i), text, property, requestType);
		}
	}

	private static InvalidFilterRuleException unknown(String text, String property, Class<?> requestType, String kind,
			String name, Set<String> offered, String prefix) {
		return unknown(text, property, requestType, kind, name, NearestNames.of(name, offered), prefix);
	}

	private static InvalidFilterRuleException unknown(String text, String property, Class<?> requestType, String kind,
			String name, List<String> suggestions, String prefix) {
		String type = requestType.getSimpleName();
		String message = property + " '" + text + "': " + type + " has no " + kind + " '" + name + "'"
				+ (suggestions.isEmpty() ? "" : "; did you mean " + String.join(" or ", suggestions.stream()
					.map((suggestion) -> "'" + prefix + suggestion + (kind.equals("method") ? "(...)" : "") + "'")
					.toList()) + "?");
		String action = "Change " + property + " to read what " + type + " offers"
				+ (suggestions.isEmpty() ? ""
						: ", e.g. " + prefix + suggestions.get(0) + (kind.equals("method") ? "(...)" : ""))
				+ (suggestions.isEmpty() ? ". Its properties: " + String.join(", ", properties(requestType)) : "")
				+ ".";
		return new InvalidFilterRuleException(property, message, action);
	}

	private static boolean isProperty(Class<?> type, String name) {
		String suffix = (name.length() > 1 && Character.isUpperCase(name.charAt(1))) ? name
				: StringUtils.capitalize(name);
		for (Method method : type.getMethods()) {
			if (method.getParameterCount() == 0 && !Modifier.isStatic(method.getModifiers())
					&& (method.getName().equals("get" + suffix)
							|| (method.getName().equals("is" + suffix) && isBoolean(method.getReturnType())))) {
				return true;
			}
		}
		try {
			type.getField(name);
			return true;
		}
		catch (NoSuchFieldException ex) {
			return false;
		}
	}

	private static boolean isMethod(Class<?> type, String name) {
		for (Method method : type.getMethods()) {
			if (method.getName().equals(name)) {
				return true;
			}
		}
		return false;
	}

	private static Set<String> properties(Class<?> type) {
		Set<String> names = new TreeSet<>();
		for (Method method : type.getMethods()) {
			String property = propertyOf(method);
			if (property != null) {
				names.add(property);
			}
		}
		return names;
	}

	private static @Nullable String propertyOf(Method method) {
		if (method.getParameterCount() != 0 || Modifier.isStatic(method.getModifiers())
				|| method.getDeclaringClass() == Object.class) {
			return null;
		}
		String name = method.getName();
		if (name.startsWith("get") && name.length() > 3 && method.getReturnType() != void.class) {
			return decapitalize(name.substring(3));
		}
		if (name.startsWith("is") && name.length() > 2 && isBoolean(method.getReturnType())) {
			return decapitalize(name.substring(2));
		}
		return null;
	}

	private static Set<String> methods(Class<?> type) {
		Set<String> names = new TreeSet<>();
		for (Method method : type.getMethods()) {
			if (method.getDeclaringClass() != Object.class) {
				names.add(method.getName());
			}
		}
		return names;
	}

	private static String decapitalize(String name) {
		return (name.length() > 1 && Character.isUpperCase(name.charAt(1))) ? name
				: Character.toLowerCase(name.charAt(0)) + name.substring(1);
	}

	private static boolean isBoolean(Class<?> type) {
		return type == boolean.class || type == Boolean.class;
	}

}
