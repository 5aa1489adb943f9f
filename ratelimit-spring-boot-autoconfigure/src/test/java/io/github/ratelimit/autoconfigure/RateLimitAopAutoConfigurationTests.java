package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;

import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AbstractBeanFactoryPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.RecordingObserver;
import io.github.ratelimit.acquire.Waiter;
import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.aop.RateLimitedAdvisor;
import io.github.ratelimit.aop.RateLimitedInterceptor;
import io.github.ratelimit.aop.operation.RateLimitedMethodValidator;
import io.github.ratelimit.aop.operation.RateLimitedOperationSource;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.bucket.RateLimiters;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Conditions and wiring of {@link RateLimitAopAutoConfiguration}.
 */
class RateLimitAopAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class))
		.withBean(Greeter.class);

	@Test
	void annotatedBeansShouldBeProxiedAndLimited() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitedOperationSource.class)
				.hasSingleBean(RateLimitedMethodValidator.class)
				.hasSingleBean(RateLimitedAdvisor.class)
				.hasSingleBean(RateLimitedInterceptor.class);
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(AopUtils.isCglibProxy(greeter)).isTrue();
			assertThat(greeter.greet()).isEqualTo("hi");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(greeter::greet);
			assertThat(context.getBean(BucketRegistry.class).find("greet").source()).isEqualTo(BucketSource.ANNOTATION);
		});
	}

	@Test
	void disabledRateLimitingShouldLeaveBeansUnproxied() {
		this.runner.withPropertyValues("ratelimit.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(RateLimitedAdvisor.class).doesNotHaveBean(RateLimitedInterceptor.class);
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(AopUtils.isAopProxy(greeter)).isFalse();
			greeter.greet();
			greeter.greet();
		});
	}

	@Test
	void withoutSpringAopThereIsNoAdvisor() {
		this.runner.withClassLoader(new FilteredClassLoader(AbstractBeanFactoryPointcutAdvisor.class))
			.run((context) -> assertThat(context).hasSingleBean(Acquirer.class)
				.doesNotHaveBean(RateLimitedAdvisor.class));
	}

	@Test
	void interfaceProxiesShouldBeUsedWhenClassProxiesAreTurnedOff() {
		this.runner.withPropertyValues("spring.aop.proxy-target-class=false")
			.withBean(Greeting.class, PoliteGreeter::new)
			.run((context) -> {
				Greeting greeting = context.getBean(Greeting.class);
				assertThat(AopUtils.isJdkDynamicProxy(greeting)).isTrue();
				greeting.greet();
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(greeting::greet);
			});
	}

	@Test
	void userBeansShouldReplaceOurs() {
		RateLimitedOperationSource ownSource = new RateLimitedOperationSource(
				new BucketRegistry(io.github.ratelimit.bucket.LimitSettings.NONE, java.util.Map.of()),
				new io.github.ratelimit.expression.RateLimitExpressions(null));
		this.runner.withBean(RateLimitedOperationSource.class, () -> ownSource)
			.run((context) -> assertThat(context.getBean(RateLimitedOperationSource.class)).isSameAs(ownSource));
	}

	@Test
	void theInterceptorShouldWaitThroughTheApplicationsWaiterAndReportToItsObservers() {
		ManualTimeSource time = new ManualTimeSource(1_700_000_000_000_000L);
		ManualWaiter waiter = new ManualWaiter(time);
		this.runner.withBean(Waiter.class, () -> waiter)
			.withBean(RateLimitStore.class,
					() -> InMemoryRateLimitStore.builder().timeSource(time).executor(Runnable::run).build())
			.withBean(RecordingObserver.class)
			.run((context) -> {
				Greeter greeter = context.getBean(Greeter.class);
				greeter.patient();
				greeter.patient();
				assertThat(waiter.sleeps()).as("the application's clock and waits, not Thread.sleep")
					.containsExactly(1_000_000L);
				assertThat(context.getBean(RecordingObserver.class).outcomes()).containsExactly(Outcome.ALLOWED,
						Outcome.WAITED);
			});
	}

	@Test
	void asynchronousCallsShouldContinueOnTheApplicationTaskExecutor() {
		List<Runnable> handedOver = new CopyOnWriteArrayList<>();
		Executor direct = (task) -> {
			handedOver.add(task);
			task.run();
		};
		this.runner.withBean("applicationTaskExecutor", Executor.class, () -> direct).run((context) -> {
			context.getBean(Acquirer.class).waiter().executor().execute(() -> {
			});
			assertThat(handedOver).hasSize(1);
		});
	}

	@Test
	void theDirectApiShouldShareTheAnnotatedBucket() {
		this.runner.run((context) -> {
			Greeter greeter = context.getBean(Greeter.class);
			greeter.greet();
			RateLimiters limiters = context.getBean(RateLimiters.class);
			assertThat(limiters.get("greet").tryAcquire("").proceeds()).as("the annotation took the only permit")
				.isFalse();
			assertThat(limiters.get("greet").bucket().limits())
				.isEqualTo(context.getBean(BucketRegistry.class).find("greet").limits());
		});
	}

	static class Greeter {

		@RateLimited(bucket = "greet", limit = 1, window = "1m")
		public String greet() {
			return "hi";
		}

		@RateLimited(bucket = "patient", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "2s")
		public String patient() {
			return "done";
		}

	}

	interface Greeting {

		String greet();

	}

	static class PoliteGreeter implements Greeting {

		@Override
		@RateLimited(bucket = "polite", limit = 1, window = "1m")
		public String greet() {
			return "good day";
		}

	}

}
