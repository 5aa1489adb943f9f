package io.github.ratelimit.aop.operation;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.util.ReflectionUtils;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.expression.RateLimitExpressions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Which annotations apply to which method, parsed once.
 */
class RateLimitedOperationSourceTests {

	private final RateLimitedOperationSource source = new RateLimitedOperationSource(
			new BucketRegistry(LimitSettings.NONE, Map.of()), new RateLimitExpressions(null));

	@Test
	void operationsShouldBeParsedOncePerMethod() {
		AtomicInteger lookups = new AtomicInteger();
		RateLimitedOperationSource counting = new RateLimitedOperationSource(() -> {
			lookups.incrementAndGet();
			return new BucketRegistry(LimitSettings.NONE, Map.of());
		}, new RateLimitExpressions(null));
		Method method = method(Annotated.class, "limited");
		RateLimitedMethod first = counting.getRateLimitedMethod(method, Annotated.class);
		assertThat(first).isNotNull();
		assertThat(counting.getRateLimitedMethod(method, Annotated.class)).isSameAs(first);
		assertThat(lookups).as("the registry is looked up lazily, once").hasValue(1);
	}

	@Test
	void registryShouldNotBeNeededForClassesWithoutTheAnnotation() {
		RateLimitedOperationSource lazy = new RateLimitedOperationSource(() -> {
			throw new AssertionError("registry needed");
		}, new RateLimitExpressions(null));
		assertThat(lazy.isRateLimited(method(Plain.class, "call"), Plain.class)).isFalse();
	}

	@Test
	void annotationOnAnInterfaceMethodShouldApplyToTheImplementation() {
		RateLimitedMethod method = this.source.getRateLimitedMethod(method(Implementation.class, "call"),
				Implementation.class);
		assertThat(method).isNotNull();
		assertThat(method.operations()).singleElement()
			.satisfies((operation) -> assertThat(operation.bucket().name()).isEqualTo("fromInterface"));
		assertThat(this.source.getRateLimitedMethod(method(Limited.class, "call"), Implementation.class))
			.as("asked with the interface method, as a JDK proxy does")
			.isNotNull();
	}

	@Test
	void overridingMethodAnnotationsShouldReplaceInheritedOnes() {
		RateLimitedMethod method = this.source.getRateLimitedMethod(method(Overriding.class, "call"), Overriding.class);
		assertThat(method.operations()).singleElement()
			.satisfies((operation) -> assertThat(operation.bucket().name()).isEqualTo("overriding"));
	}

	@Test
	void classLevelAnnotationShouldApplyToPublicMethodsOnly() {
		assertThat(this.source.isRateLimited(method(ClassLevel.class, "open"), ClassLevel.class)).isTrue();
		assertThat(this.source.isRateLimited(method(ClassLevel.class, "hidden"), ClassLevel.class)).isFalse();
		assertThat(this.source.isRateLimited(method(ClassLevel.class, "toString"), ClassLevel.class)).isFalse();
		assertThat(this.source.isRateLimited(method(ClassLevel.class, "hashCode"), ClassLevel.class)).isFalse();
		assertThat(this.source.isRateLimited(method(Object.class, "getClass"), ClassLevel.class)).isFalse();
	}

	@Test
	void privateMethodsShouldNeverBeLimited() {
		assertThat(this.source.isRateLimited(method(Annotated.class, "secret"), Annotated.class)).isFalse();
	}

	@Test
	void composedAnnotationShouldBeFound() {
		RateLimitedMethod method = this.source.getRateLimitedMethod(method(Annotated.class, "composed"),
				Annotated.class);
		assertThat(method.operations()).singleElement()
			.satisfies((operation) -> assertThat(operation.bucket().name()).isEqualTo("composed"));
	}

	@Test
	void repeatedAnnotationsShouldKeepTheirOrder() {
		RateLimitedMethod method = this.source.getRateLimitedMethod(method(Annotated.class, "twice"), Annotated.class);
		assertThat(method.operations()).extracting((operation) -> operation.bucket().name())
			.containsExactly("first", "second");
	}

	@Test
	void argumentNamedWithoutParameterNamesShouldFailNamingTheCompilerFlag() {
		// As compiled without -parameters: the class file has no parameter names.
		RateLimitedOperationSource unnamed = new RateLimitedOperationSource(
				() -> new BucketRegistry(LimitSettings.NONE, Map.of()), new RateLimitExpressions(null),
				(ParameterNameDiscoverer) new Unnamed());
		Method keyed = ReflectionUtils.findMethod(WithArguments.class, "keyed", String.class);
		assertThatExceptionOfType(InvalidRateLimitedException.class)
			.isThrownBy(() -> unnamed.getRateLimitedMethod(keyed, WithArguments.class))
			.withMessageContaining("@RateLimited(key) on RateLimitedOperationSourceTests.WithArguments.keyed(String)")
			.withMessageContaining("'#apiKey' reads #apiKey")
			.withMessageContaining("compiled without -parameters")
			.satisfies((ex) -> assertThat(ex.getAction()).contains("<parameters>true</parameters>", "#p0"));
		Method positional = ReflectionUtils.findMethod(WithArguments.class, "positional", String.class);
		assertThat(unnamed.getRateLimitedMethod(positional, WithArguments.class))
			.as("#p0 and built-in variables need no names")
			.isNotNull();
		assertThat(this.source.getRateLimitedMethod(keyed, WithArguments.class))
			.as("with parameter names, as this test class is compiled")
			.isNotNull();
	}

	private static Method method(Class<?> type, String name) {
		for (Method method : ReflectionUtils.getAllDeclaredMethods(type)) {
			if (method.getName().equals(name) && method.getParameterCount() == 0) {
				return method;
			}
		}
		throw new IllegalArgumentException(name);
	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@RateLimited(bucket = "composed", limit = 1, window = "1s")
	@interface OncePerSecond {

	}

	static class Unnamed implements ParameterNameDiscoverer {

		@Override
		public String @Nullable [] getParameterNames(Method method) {
			return null;
		}

		@Override
		public String @Nullable [] getParameterNames(Constructor<?> ctor) {
			return null;
		}

	}

	static class WithArguments {

		@RateLimited(bucket = "keyed", key = "#apiKey", limit = 1, window = "1m")
		public void keyed(String apiKey) {
		}

		@RateLimited(bucket = "positional", key = "#p0 + #method.name + #args.length", limit = 1, window = "1m")
		public void positional(String apiKey) {
		}

	}

	static class Plain {

		public void call() {
		}

	}

	static class Annotated {

		@RateLimited(bucket = "limited", limit = 1, window = "1m")
		public void limited() {
		}

		@RateLimited(bucket = "secret", limit = 1, window = "1m")
		private void secret() {
		}

		@OncePerSecond
		public void composed() {
		}

		@RateLimited(bucket = "first", limit = 1, window = "1m")
		@RateLimited(bucket = "second", limit = 1, window = "1m")
		public void twice() {
		}

		void useSecret() {
			secret();
		}

	}

	interface Limited {

		@RateLimited(bucket = "fromInterface", limit = 1, window = "1m")
		void call();

	}

	static class Implementation implements Limited {

		@Override
		public void call() {
		}

	}

	static class Overriding extends Implementation {

		@Override
		@RateLimited(bucket = "overriding", limit = 1, window = "1m")
		public void call() {
		}

	}

	@RateLimited(bucket = "classLevel", limit = 1, window = "1m")
	static class ClassLevel {

		public void open() {
		}

		void hidden() {
		}

		@Override
		public String toString() {
			return "classLevel";
		}

		@Override
		public int hashCode() {
			return 1;
		}

		@Override
		public boolean equals(Object other) {
			return other == this;
		}

	}

}
