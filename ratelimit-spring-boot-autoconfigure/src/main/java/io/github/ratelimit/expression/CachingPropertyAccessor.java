package io.github.ratelimit.expression;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.support.ReflectivePropertyAccessor;

/**
 * Reads and writes properties exactly as SpEL's {@link ReflectivePropertyAccessor} does,
 * but resolves each property of each class once.
 * <p>
 * Why: a SpEL property node remembers the accessor that read it only while that accessor
 * is in the context's list, and for a {@code ReflectivePropertyAccessor} it remembers the
 * optimized accessor it creates, which never is. So with the plain accessor every
 * evaluation of {@code #request.remoteAddr} resolves the property again, through two
 * cache lookups keyed by a record whose {@code equals} and {@code hashCode} are slow
 * until fully inlined: together more than the rate limit decision itself. This accessor
 * is what the node remembers, and it keeps the optimized accessors per class and name, so
 * a repeated read is one lookup and the getter call.
 * <p>
 * Resolution itself is left to the {@code ReflectivePropertyAccessor}, so what an
 * expression can read, and the errors it gets, do not change. Thread-safe; meant to be
 * shared by every context so its caches survive.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class CachingPropertyAccessor implements PropertyAccessor {

	private final ReflectivePropertyAccessor reflective = new ReflectivePropertyAccessor();

	/**
	 * Per class, by property name. A {@link ClassValue}, so that a class (and its class
	 * loader) is not held by this accessor.
	 */
	private final ClassValue<Map<String, PropertyAccessor>> readers = new ClassValue<>() {

		@Override
		protected Map<String, PropertyAccessor> computeValue(Class<?> type) {
			return new ConcurrentHashMap<>(4);
		}

	};

	@Override
	public Class<?> @Nullable [] getSpecificTargetClasses() {
		return null;
	}

	@Override
	public boolean canRead(EvaluationContext context, @Nullable Object target, String name) throws AccessException {
		return this.reflective.canRead(context, target, name);
	}

	@Override
	public TypedValue read(EvaluationContext context, @Nullable Object target, String name) throws AccessException {
		if (target == null || target instanceof Class) {
			// Static access (T(...).x) is rare: not worth caching.
			return this.reflective.read(context, target, name);
		}
		Map<String, PropertyAccessor> byName = this.readers.get(target.getClass());
		PropertyAccessor reader = byName.get(name);
		if (reader == null) {
			if (!this.reflective.canRead(context, target, name)) {
				// Fails as the reflective accessor fails for an unknown property.
				return this.reflective.read(context, target, name);
			}
			reader = this.reflective.createOptimalAccessor(context, target, name);
			byName.put(name, reader);
		}
		return reader.read(context, target, name);
	}

	@Override
	public boolean canWrite(EvaluationContext context, @Nullable Object target, String name) throws AccessException {
		return this.reflective.canWrite(context, target, name);
	}

	@Override
	public void write(EvaluationContext context, @Nullable Object target, String name, @Nullable Object newValue)
			throws AccessException {
		this.reflective.write(context, target, name, newValue);
	}

}
