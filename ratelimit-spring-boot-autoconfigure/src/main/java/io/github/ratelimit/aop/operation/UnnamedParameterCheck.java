package io.github.ratelimit.aop.operation;

import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * Fails startup when an expression names a method argument ({@code #apiKey}) that the
 * class file cannot name: compiled without {@code -parameters}, every such reference
 * would evaluate to {@code null} on each call, and the call would fail with a null-key
 * message that points at the wrong cause. {@code spring-boot-starter-parent} compiles
 * with {@code -parameters}; an application that imports only the dependency BOM does not.
 *
 * @author ratelimit-spring-boot-starter authors
 */
final class UnnamedParameterCheck {

	/** Variables the evaluation context sets itself, whatever the parameter names. */
	private static final Set<String> BUILT_IN = Set.of("args", "method", "target", "request", "clientIp", "principal",
			"exchange", "result", "exception", "settled", "root", "this");

	/** Arguments by position, which need no names: {@code #p0}, {@code #a0}. */
	private static final Pattern POSITIONAL = Pattern.compile("[ap]\\d+");

	private UnnamedParameterCheck() {
	}

	/**
	 * Checks one operation's expressions.
	 * @param operation the parsed annotation
	 * @param method the annotated method
	 * @param description the method, for messages
	 * @param discoverer what names parameters at run time
	 * @throws InvalidRateLimitedException when an expression names an argument the
	 * method's parameters have no names for
	 */
	static void check(RateLimitedOperation operation, Method method, String description,
			ParameterNameDiscoverer discoverer) {
		if (method.getParameterCount() == 0 || discoverer.getParameterNames(method) != null) {
			return;
		}
		Map<String, @Nullable Expression> expressions = new LinkedHashMap<>();
		expressions.put("key", operation.key());
		expressions.put("cost", operation.cost());
		expressions.put("limitExpression", operation.limit());
		expressions.put("skipWhen", operation.skipWhen());
		expressions.put("refundWhen", operation.refundWhen());
		expressions.put("settle", operation.settle());
		expressions.put("settleOnError", operation.settleOnError());
		expressions.put("zoneExpression", operation.zone());
		for (Map.Entry<String, @Nullable Expression> entry : expressions.entrySet()) {
			if (!(entry.getValue() instanceof SpelExpression expression)) {
				continue;
			}
			String unnamed = unnamed(expression.getAST());
			if (unnamed != null) {
				throw new InvalidRateLimitedException(RateLimitedOperation.where(entry.getKey(), description),
						"'" + expression.getExpressionString() + "' reads #" + unnamed + ", but the parameters of "
								+ description + " have no names at run time (compiled without -parameters), so it would"
								+ " be null on every call",
						"Compile with -parameters (spring-boot-starter-parent does; with the dependency BOM"
								+ " alone, set <parameters>true</parameters> in maven-compiler-plugin, or"
								+ " options.compilerArgs << '-parameters' in Gradle), or read the argument"
								+ " by position (#p0, #p1, ...).");
			}
		}
	}

	private static @Nullable String unnamed(SpelNode node) {
		if (node instanceof VariableReference) {
			String name = node.toStringAST().substring(1);
			if (!BUILT_IN.contains(name) && !POSITIONAL.matcher(name).matches()) {
				return name;
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			String found = unnamed(node.getChild(i));
			if (found != null) {
				return found;
			}
		}
		return null;
	}

}
