package io.github.ratelimit.aop.operation;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Objects;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.core.CoroutinesUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.github.ratelimit.RateLimitExceededException;

/**
 * The {@code fallbackMethod} of an operation, found and checked at startup: a method of
 * the same class with the same parameters, optionally followed by one that accepts the
 * {@link RateLimitExceededException}, and a return type the annotated method may return.
 * A Kotlin {@code suspend} function's fallback is a {@code suspend} function of the same
 * declared parameters (the {@code Continuation} aside), optionally followed by the
 * exception.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class FallbackMethod {

	private final Method method;

	private final boolean takesException;

	private final boolean suspending;

	private FallbackMethod(Method method, boolean takesException, boolean suspending) {
		this.method = method;
		this.takesException = takesException;
		this.suspending = suspending;
	}

	/**
	 * Finds the fallback; a variant taking the exception wins over one without.
	 * @param targetClass the class of the bean
	 * @param annotated the rate-limited method
	 * @param name the fallback method name
	 * @param where the attribute, for messages
	 * @return the fallback
	 * @throws InvalidRateLimitedException naming the expected signatures when none fits
	 */
	static FallbackMethod resolve(Class<?> targetClass, Method annotated, String name, String where) {
		boolean suspending = KotlinDetector.isSuspendingFunction(annotated);
		Class<?>[] parameters = KotlinFunctions.declaredParameterTypes(annotated);
		Method plain = null;
		Method withException = null;
		for (Method candidate : ReflectionUtils.getUniqueDeclaredMethods(targetClass,
				ReflectionUtils.USER_DECLARED_METHODS)) {
			// A suspend function falls back on a suspend function: the caller awaits it.
			if (!candidate.getName().equals(name) || KotlinDetector.isSuspendingFunction(candidate) != suspending) {
				continue;
			}
			Class<?>[] types = KotlinFunctions.declaredParameterTypes(candidate);
			if (Arrays.equals(types, parameters)) {
				plain = candidate;
			}
			else if (types.length == parameters.length + 1
					&& Arrays.equals(Arrays.copyOf(types, parameters.length), parameters)
					&& types[parameters.length].isAssignableFrom(RateLimitExceededException.class)) {
				withException = candidate;
			}
		}
		Method chosen = (withException != null) ? withException : plain;
		if (chosen == null) {
			String list = Arrays.stream(parameters).map(Class::getSimpleName).collect(Collectors.joining(", "));
			String example = suspending ? "suspend fun " + name + "(" + list + ")"
					: annotated.getReturnType().getSimpleName() + " " + name + "(" + list + ")";
			throw new InvalidRateLimitedException(where,
					"no method '" + name + "' in " + targetClass.getName() + " with parameters (" + list + ") or ("
							+ list + (list.isEmpty() ? "" : ", ") + "RateLimitExceededException); declare one, e.g. "
							+ example,
					"Declare " + example + " in " + targetClass.getName() + ", or correct fallbackMethod.");
		}
		if (!ClassUtils.isAssignable(annotated.getReturnType(), chosen.getReturnType())) {
			throw new InvalidRateLimitedException(where,
					"fallback method " + chosen.getName() + " returns " + chosen.getReturnType().getName() + ", which "
							+ annotated.getName() + " cannot return (it returns " + annotated.getReturnType().getName()
							+ ")",
					"Make " + chosen.getName() + " return " + annotated.getReturnType().getName()
							+ " (or a subtype), like " + annotated.getName() + ".");
		}
		ReflectionUtils.makeAccessible(chosen);
		return new FallbackMethod(chosen, withException != null, suspending);
	}

	/**
	 * Calls the fallback instead of the rejected method.
	 * @param target the bean (not the proxy, so the fallback is not limited itself)
	 * @param arguments the arguments of the rejected call
	 * @param exception the rejection
	 * @return what the fallback returns
	 * @throws Throwable what the fallback throws
	 */
	public @Nullable Object invoke(@Nullable Object target, @Nullable Object[] arguments,
			RateLimitExceededException exception) throws Throwable {
		// A suspend function's arguments end with the caller's Continuation: the fallback
		// gets its declared arguments, and runs as a publisher the caller awaits.
		Object[] declared = this.suspending ? Arrays.copyOf(arguments, arguments.length - 1) : arguments;
		Object[] actual = declared;
		if (this.takesException) {
			actual = Arrays.copyOf(declared, declared.length + 1);
			actual[declared.length] = exception;
		}
		if (this.suspending) {
			// The bean (a fallback of the same class, not static).
			return CoroutinesUtils.invokeSuspendingFunction(this.method, Objects.requireNonNull(target), actual);
		}
		try {
			return this.method.invoke(target, actual);
		}
		catch (InvocationTargetException ex) {
			throw ex.getTargetException();
		}
	}

	@Override
	public String toString() {
		return this.method.toGenericString();
	}

}
