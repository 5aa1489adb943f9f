package io.github.ratelimit.aop.operation;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.github.ratelimit.RateLimitExceededException;

/**
 * The {@code fallbackMethod} of an operation, found and checked at startup: a method of
 * the same class with the same parameters, optionally followed by one that accepts the
 * {@link RateLimitExceededException}, and a return type the annotated method may return.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class FallbackMethod {

	private final Method method;

	private final boolean takesException;

	private FallbackMethod(Method method, boolean takesException) {
		this.method = method;
		this.takesException = takesException;
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
		Class<?>[] parameters = annotated.getParameterTypes();
		Method plain = null;
		Method withException = null;
		for (Method candidate : ReflectionUtils.getUniqueDeclaredMethods(targetClass,
				ReflectionUtils.USER_DECLARED_METHODS)) {
			if (!candidate.getName().equals(name)) {
				continue;
			}
			Class<?>[] types = candidate.getParameterTypes();
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
			String example = annotated.getReturnType().getSimpleName() + " " + name + "(" + list + ")";
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
		return new FallbackMethod(chosen, withException != null);
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
		Object[] actual = arguments;
		if (this.takesException) {
			actual = Arrays.copyOf(arguments, arguments.length + 1);
			actual[arguments.length] = exception;
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
