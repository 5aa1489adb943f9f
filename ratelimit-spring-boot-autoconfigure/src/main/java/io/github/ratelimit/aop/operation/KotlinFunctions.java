package io.github.ratelimit.aop.operation;

import java.lang.reflect.Method;
import java.util.Arrays;

import org.springframework.core.KotlinDetector;

/**
 * What a Kotlin {@code suspend} function declares, as opposed to its compiled form, which
 * takes a {@code Continuation} last and returns {@code Object}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class KotlinFunctions {

	private KotlinFunctions() {
	}

	/**
	 * Returns the parameter types a method declares: a {@code suspend} function's without
	 * its {@code Continuation}.
	 * @param method the method
	 * @return the declared parameter types
	 */
	public static Class<?>[] declaredParameterTypes(Method method) {
		Class<?>[] types = method.getParameterTypes();
		return KotlinDetector.isSuspendingFunction(method) ? Arrays.copyOf(types, types.length - 1) : types;
	}

}
