package io.github.ratelimit.aop;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.RecordingObserver;
import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAopAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Methods returning {@code CompletionStage}, {@code Mono} or {@code Flux} are limited
 * without blocking: waits are pending stages (released by the test), rejections are
 * failed stages or error signals.
 */
class RateLimitedAsyncTests {

	/**
	 * Far longer than any test needs; a call left waiting by mistake fails instead of
	 * hanging.
	 */
	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class))
		.withBean(BucketRegistry.class, () -> new BucketRegistry(LimitSettings.NONE, Map.of()))
		.withBean(AsyncService.class);

	@Test
	void completionStageShouldWaitForAPermitWithoutBlocking() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			assertThat(service.fetch("a")).isCompletedWithValue("got a");
			CompletableFuture<String> second = service.fetch("b");
			assertThat(second).as("waiting, yet the call returned").isNotDone();
			assertThat(service.calls()).as("the method runs once the permit is granted").isEqualTo(1);
			assertThat(waiter.pendingDelays()).containsExactly(1_000_000L);
			waiter.releaseNext();
			assertThat(second).isCompletedWithValue("got b");
			assertThat(service.calls()).isEqualTo(2);
			assertThat(waiter.sleeps()).as("no thread slept").isEmpty();
			assertThat(context.getBean(RecordingObserver.class).outcomes()).containsExactly(Outcome.ALLOWED,
					Outcome.WAITED);
		});
	}

	@Test
	void completionStageRejectionShouldFailTheStage() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			assertThat(service.once()).isCompletedWithValue("once");
			CompletionStage<String> rejected = service.once();
			assertThat(rejected.toCompletableFuture()).isCompletedExceptionally();
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> rejected.toCompletableFuture().get())
				.withCauseInstanceOf(RateLimitExceededException.class);
			assertThat(service.calls()).isEqualTo(1);
		});
	}

	@Test
	void completionStageShouldFailWhenThePermitWouldComeAfterMaxWait() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			service.fetchSoon();
			assertThat(service.fetchSoon()).isCompletedExceptionally();
			assertThat(waiter.pendingDelays()).isEmpty();
		});
	}

	@Test
	void completionStageWithRepeatedAnnotationsShouldBeAllOrNothing() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			InMemoryRateLimitStore store = context.getBean(InMemoryRateLimitStore.class);
			BucketDefinition wide = context.getBean(BucketRegistry.class).find("asyncWide");
			assertThat(service.twoLimits()).isCompletedWithValue("both");
			assertThat(service.twoLimits()).isCompletedExceptionally();
			assertThat(store.peek("asyncWide", "", wide.limits()).remaining())
				.as("the permit taken from 'asyncWide' is back")
				.isEqualTo(4);
		});
	}

	@Test
	void completionStageFallbackShouldBeReturnedWhenRejected() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			assertThat(service.withFallback()).isCompletedWithValue("live");
			assertThat(service.withFallback()).isCompletedWithValue("fallback: withFallback");
		});
	}

	@Test
	void completionStageRefundWhenShouldSeeTheOutcome() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			for (int i = 0; i < 10; i++) {
				assertThat(service.login("alice", true)).isCompletedWithValue("session");
			}
			assertThat(service.login("alice", false)).isCompletedExceptionally();
			assertThat(service.login("alice", false)).isCompletedExceptionally();
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> service.login("alice", true).get())
				.withCauseInstanceOf(RateLimitExceededException.class);
		});
	}

	@Test
	void completionStageLeakyBucketDelayShouldNotBlock() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			assertThat(service.smooth()).isCompletedWithValue("smooth");
			CompletableFuture<String> second = service.smooth();
			assertThat(second).isNotDone();
			assertThat(waiter.pendingDelays()).containsExactly(100_000L);
			waiter.releaseNext();
			assertThat(second).isCompletedWithValue("smooth");
		});
	}

	@Test
	void completionStageShouldFailWithExpressionErrorsInsteadOfThrowing() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			CompletableFuture<String> result = service.keyed(null);
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(result::get)
				.havingCause()
				.isInstanceOf(IllegalStateException.class)
				.withMessageContaining("'#id' evaluated to null");
		});
	}

	@Test
	void completionStageShouldWaitOnTheExecutorWithRealTime() {
		this.runner.run((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			Thread caller = Thread.currentThread();
			assertThat(service.fetch("a").get(5, TimeUnit.SECONDS)).isEqualTo("got a");
			assertThat(service.lastThread()).isSameAs(caller);
			CompletableFuture<String> second = service.fetch("b");
			// The token comes back after about a second: far longer than returning takes.
			assertThat(second).isNotDone();
			assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("got b");
			assertThat(service.lastThread()).as("called after the wait, on the executor").isNotSameAs(caller);
		});
	}

	@Test
	void monoShouldWaitForAPermitWithoutBlocking() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			assertThat(service.mono("a").toFuture()).isCompletedWithValue("mono a");
			CompletableFuture<String> second = service.mono("b").toFuture();
			assertThat(second).isNotDone();
			assertThat(service.calls()).as("the Mono is not subscribed before the permit").isEqualTo(1);
			waiter.releaseNext();
			assertThat(second).isCompletedWithValue("mono b");
			assertThat(waiter.sleeps()).isEmpty();
		});
	}

	@Test
	void monoShouldTakeAPermitPerSubscription() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			Mono<String> mono = service.monoOnce();
			Mono<String> unused = service.monoOnce();
			assertThat(unused).isNotNull();
			assertThat(mono.block(TIMEOUT)).as("calling without subscribing takes nothing").isEqualTo("mono once");
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> mono.block(TIMEOUT));
		});
	}

	@Test
	void monoRefundWhenShouldSeeTheValue() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			for (int i = 0; i < 5; i++) {
				assertThat(service.monoLookup("cached").block(TIMEOUT)).isEqualTo("from cache");
			}
			assertThat(service.monoLookup("db").block(TIMEOUT)).isEqualTo("from db");
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> service.monoLookup("db").block(TIMEOUT));
		});
	}

	@Test
	void monoFallbackShouldBeSubscribedWhenRejected() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			assertThat(service.monoWithFallback().block(TIMEOUT)).isEqualTo("live");
			assertThat(service.monoWithFallback().block(TIMEOUT)).isEqualTo("fallback");
		});
	}

	@Test
	void monoShouldSignalExpressionErrors() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			Mono<String> mono = service.monoKeyed(null);
			assertThatIllegalStateException().isThrownBy(() -> mono.block(TIMEOUT))
				.withMessageContaining("'#id' evaluated to null");
		});
	}

	@Test
	void fluxShouldBeLimitedPerSubscription() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			Flux<Integer> flux = service.flux();
			assertThat(flux.collectList().block(TIMEOUT)).containsExactly(1, 2, 3);
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> flux.collectList().block(TIMEOUT));
		});
	}

	@Test
	void fluxShouldWaitWithoutBlockingAndRefundOnError() {
		runManual((context) -> {
			AsyncService service = context.getBean(AsyncService.class);
			ManualWaiter waiter = context.getBean(ManualWaiter.class);
			AtomicReference<List<Integer>> values = new AtomicReference<>();
			for (int i = 0; i < 3; i++) {
				assertThatIllegalStateException().isThrownBy(() -> service.failingFlux(true).blockLast(TIMEOUT))
					.withMessage("stream broke");
			}
			service.failingFlux(false).collectList().subscribe(values::set);
			assertThat(values.get()).containsExactly(1, 2);
			service.failingFlux(false).collectList().subscribe(values::set);
			values.set(null);
			assertThat(waiter.pendingDelays()).hasSize(1);
			waiter.releaseNext();
			assertThat(values.get()).containsExactly(1, 2);
		});
	}

	private void runManual(RateLimitedInterceptorTests.ThrowingContextConsumer consumer) {
		this.runner.withUserConfiguration(ManualTimeConfiguration.class)
			.run((AssertableApplicationContext context) -> consumer.accept(context));
	}

	static class AsyncService {

		private final AtomicInteger calls = new AtomicInteger();

		private volatile Thread lastThread = Thread.currentThread();

		int calls() {
			return this.calls.get();
		}

		Thread lastThread() {
			return this.lastThread;
		}

		@RateLimited(bucket = "fetch", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "5s")
		public CompletableFuture<String> fetch(String id) {
			this.calls.incrementAndGet();
			this.lastThread = Thread.currentThread();
			return CompletableFuture.completedFuture("got " + id);
		}

		@RateLimited(bucket = "fetchSoon", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "200ms")
		public CompletableFuture<String> fetchSoon() {
			return CompletableFuture.completedFuture("soon");
		}

		@RateLimited(bucket = "once", limit = 1, window = "1m")
		public CompletionStage<String> once() {
			this.calls.incrementAndGet();
			return CompletableFuture.completedFuture("once");
		}

		@RateLimited(bucket = "withFallback", limit = 1, window = "1m", fallbackMethod = "fallback")
		public CompletableFuture<String> withFallback() {
			return CompletableFuture.completedFuture("live");
		}

		CompletableFuture<String> fallback(RateLimitExceededException ex) {
			return CompletableFuture.completedFuture("fallback: " + ex.getBucket());
		}

		@RateLimited(bucket = "asyncLogin", key = "#user", limit = 2, window = "1m", refundWhen = "#exception == null")
		public CompletableFuture<String> login(String user, boolean ok) {
			return ok ? CompletableFuture.completedFuture("session")
					: CompletableFuture.failedFuture(new IllegalArgumentException("Bad credentials"));
		}

		@RateLimited(bucket = "smoothStage", limit = 10, window = "1s", algorithm = Algorithm.LEAKY_BUCKET)
		public CompletableFuture<String> smooth() {
			return CompletableFuture.completedFuture("smooth");
		}

		@RateLimited(bucket = "asyncWide", limit = 5, window = "1m")
		@RateLimited(bucket = "asyncNarrow", limit = 1, window = "1m")
		public CompletableFuture<String> twoLimits() {
			return CompletableFuture.completedFuture("both");
		}

		@RateLimited(bucket = "keyed", key = "#id", limit = 1, window = "1m")
		public CompletableFuture<String> keyed(String id) {
			return CompletableFuture.completedFuture(id);
		}

		@RateLimited(bucket = "mono", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "5s")
		public Mono<String> mono(String id) {
			return Mono.fromCallable(() -> {
				this.calls.incrementAndGet();
				return "mono " + id;
			});
		}

		@RateLimited(bucket = "monoOnce", limit = 1, window = "1m")
		public Mono<String> monoOnce() {
			return Mono.just("mono once");
		}

		@RateLimited(bucket = "monoLookup", limit = 1, window = "1m", refundWhen = "#result == 'from cache'")
		public Mono<String> monoLookup(String source) {
			return Mono.just(source.equals("cached") ? "from cache" : "from db");
		}

		@RateLimited(bucket = "monoWithFallback", limit = 1, window = "1m", fallbackMethod = "monoFallback")
		public Mono<String> monoWithFallback() {
			return Mono.just("live");
		}

		Mono<String> monoFallback() {
			return Mono.just("fallback");
		}

		@RateLimited(bucket = "monoKeyed", key = "#id", limit = 1, window = "1m")
		public Mono<String> monoKeyed(String id) {
			return Mono.justOrEmpty(id);
		}

		@RateLimited(bucket = "flux", limit = 1, window = "1m")
		public Flux<Integer> flux() {
			return Flux.just(1, 2, 3);
		}

		@RateLimited(bucket = "failingFlux", limit = 1, window = "1s", onLimit = OnLimit.WAIT, maxWait = "5s",
				refundWhen = "#exception != null")
		public Flux<Integer> failingFlux(boolean fail) {
			Flux<Integer> values = Flux.just(1, 2);
			return fail ? values.concatWith(Flux.error(new IllegalStateException("stream broke"))) : values;
		}

	}

}
