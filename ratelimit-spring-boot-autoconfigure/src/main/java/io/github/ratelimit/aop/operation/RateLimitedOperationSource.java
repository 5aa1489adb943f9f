package io.github.ratelimit.aop.operation;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.annotation.RepeatableContainers;
import org.springframework.expression.BeanResolver;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.function.SingletonSupplier;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.expression.RateLimitExpressions;

/**
 * Finds the {@link RateLimited @RateLimited} annotations of a method and parses them,
 * once per method and target class; the advisor's pointcut, the interceptor and the
 * startup validator all ask here.
 * <p>
 * Annotations on the method (or on the nearest method it overrides or implements) apply;
 * when there are none, those on the class (or its nearest annotated superclass or
 * interface) apply to every public method but {@code equals}, {@code hashCode} and
 * {@code toString}. Private and static methods are never limited: a proxy cannot
 * intercept them.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RateLimitedOperationSource {

	private final RateLimitedOperationParser parser;

	private final RateLimitExpressions expressions;

	private final @Nullable BeanResolver beanResolver;

	private final ParameterNameDiscoverer parameterNameDiscoverer;

	private final Map<MethodClassKey, Optional<RateLimitedMethod>> cache = new ConcurrentHashMap<>(256);

	/**
	 * Creates a source.
	 * @param registry registers each annotation's bucket and resolves its limits
	 * @param expressions parses the annotations' SpEL
	 */
	public RateLimitedOperationSource(BucketRegistry registry, RateLimitExpressions expressions) {
		this(supplier(registry), expressions);
	}

	/**
	 * Creates a source that looks the registry up only when it finds the first
	 * annotation. The source is needed while bean post-processors are being registered
	 * (by the advisor and the validator); a lazy registry keeps the registry and the
	 * configuration properties behind it out of that early phase, so they are processed
	 * like any other bean.
	 * @param registry supplies the registry, called at most once
	 * @param expressions parses the annotations' SpEL
	 */
	public RateLimitedOperationSource(Supplier<BucketRegistry> registry, RateLimitExpressions expressions) {
		this(registry, expressions, new DefaultParameterNameDiscoverer());
	}

	/**
	 * Creates a source that names parameters with the given discoverer (tests: a method
	 * compiled without {@code -parameters}).
	 */
	RateLimitedOperationSource(Supplier<BucketRegistry> registry, RateLimitExpressions expressions,
			ParameterNameDiscoverer parameterNameDiscoverer) {
		Objects.requireNonNull(registry, "'registry' must not be null");
		this.parameterNameDiscoverer = parameterNameDiscoverer;
		this.expressions = Objects.requireNonNull(expressions, "'expressions' must not be null");
		this.parser = new RateLimitedOperationParser(SingletonSupplier.of(registry), expressions);
		// The per-call contexts are MethodBasedEvaluationContexts; they take the bean
		// resolver the expression support was configured with.
		this.beanResolver = expressions.context(null).getBeanResolver();
	}

	/**
	 * Returns the rate limits of a method, parsing them on first use.
	 * @param method the method, as invoked (possibly an interface method)
	 * @param targetClass the class of the target bean, or {@code null} when unknown
	 * @return the rate-limited method, or {@code null} when the method is not limited
	 * @throws IllegalStateException when an annotation is invalid, naming the class,
	 * method, attribute and value
	 */
	public @Nullable RateLimitedMethod getRateLimitedMethod(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		Optional<RateLimitedMethod> cached = this.cache.get(cacheKey);
		if (cached == null) {
			// Not computeIfAbsent: parsing registers buckets under the registry's lock,
			// which must not be taken while holding a map bin. Parsing twice in a race
			// gives equal results.
			cached = Optional.ofNullable(compute(method, targetClass));
			this.cache.putIfAbsent(cacheKey, cached);
		}
		return cached.orElse(null);
	}

	/**
	 * Returns whether a method is rate-limited.
	 * @param method the method, as invoked
	 * @param targetClass the class of the target bean, or {@code null} when unknown
	 * @return {@code true} when it has at least one operation
	 */
	public boolean isRateLimited(Method method, @Nullable Class<?> targetClass) {
		return getRateLimitedMethod(method, targetClass) != null;
	}

	private static Supplier<BucketRegistry> supplier(BucketRegistry registry) {
		Objects.requireNonNull(registry, "'registry' must not be null");
		return () -> registry;
	}

	/**
	 * Returns the expression support the annotations are parsed with.
	 * @return the expression support
	 */
	public RateLimitExpressions expressions() {
		return this.expressions;
	}

	/**
	 * Returns what resolves {@code @beanName} in expressions.
	 * @return the bean resolver, or {@code null} for none
	 */
	public @Nullable BeanResolver beanResolver() {
		return this.beanResolver;
	}

	/**
	 * Returns what names method parameters for expressions.
	 * @return the discoverer
	 */
	public ParameterNameDiscoverer parameterNameDiscoverer() {
		return this.parameterNameDiscoverer;
	}

	private @Nullable RateLimitedMethod compute(Method method, @Nullable Class<?> targetClass) {
		if (Modifier.isStatic(method.getModifiers()) || Modifier.isPrivate(method.getModifiers())
				|| method.getDeclaringClass() == Object.class) {
			return null;
		}
		Class<?> userClass = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
		Method specificMethod = AopUtils.getMostSpecificMethod(method, userClass);
		if (Modifier.isPrivate(specificMethod.getModifiers())) {
			return null;
		}
		List<RateLimited> annotations = find(specificMethod);
		if (annotations.isEmpty() && specificMethod != method) {
			annotations = find(method);
		}
		if (annotations.isEmpty() && appliesClassLevel(specificMethod)) {
			annotations = find(userClass);
		}
		if (annotations.isEmpty()) {
			return null;
		}
		String description = RateLimitedOperationParser.describe(specificMethod, userClass);
		List<RateLimitedOperation> operations = new ArrayList<>(annotations.size());
		for (RateLimited annotation : annotations) {
			RateLimitedOperation operation = this.parser.parse(annotation, specificMethod, userClass);
			UnnamedParameterCheck.check(operation, specificMethod, description, this.parameterNameDiscoverer);
			operations.add(operation);
		}
		return new RateLimitedMethod(specificMethod, operations, parameterNames(specificMethod), description);
	}

	/**
	 * Returns whether a class-level annotation covers this method: public methods of the
	 * application, not the {@code Object} contract, which would make a limited bean
	 * unusable as a map key or in a log line.
	 */
	private static boolean appliesClassLevel(Method method) {
		return Modifier.isPublic(method.getModifiers()) && ClassUtils.isUserLevelMethod(method)
				&& !ReflectionUtils.isEqualsMethod(method) && !ReflectionUtils.isHashCodeMethod(method)
				&& !ReflectionUtils.isToStringMethod(method);
	}

	/**
	 * Finds the nearest declaration of the annotation in the type hierarchy, so that an
	 * overriding method or a subclass replaces the annotations it inherits rather than
	 * adding to them. Repeated and meta-annotations are included.
	 */
	private static List<RateLimited> find(AnnotatedElement element) {
		List<MergedAnnotation<RateLimited>> all = MergedAnnotations
			.from(element, SearchStrategy.TYPE_HIERARCHY, RepeatableContainers.standardRepeatables())
			.stream(RateLimited.class)
			.toList();
		if (all.isEmpty()) {
			return List.of();
		}
		int nearest = all.stream().mapToInt(MergedAnnotation::getAggregateIndex).min().getAsInt();
		return all.stream()
			.filter((annotation) -> annotation.getAggregateIndex() == nearest)
			.map(MergedAnnotation::synthesize)
			.toList();
	}

	private Set<String> parameterNames(Method method) {
		Set<String> names = new LinkedHashSet<>();
		String[] discovered = this.parameterNameDiscoverer.getParameterNames(method);
		if (discovered != null) {
			names.addAll(List.of(discovered));
		}
		else {
			for (Parameter parameter : method.getParameters()) {
				names.add(parameter.getName());
			}
		}
		return names;
	}

}
