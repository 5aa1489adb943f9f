package io.github.ratelimit.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.annotation.ConcurrencyLimited;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAopAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.concurrency.ConcurrencyLimitExceededException;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.concurrency.HeldPermits;
import io.github.ratelimit.store.CountingStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @RateLimited} and {@code @ConcurrencyLimited} on one method: of one bucket and
 * key, the permit and the decision are one store call, on every return kind; the permit
 * is taken first (a call refused for lack of one takes nothing from the rate limit), a
 * call the rate limit refuses holds no permit, and the permit is held until the call
 * ends. Of different buckets, two calls, the permit first.
 */
class RateAndConcurrencyLimitedTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class))
		.withBean(RateLimitStore.class, () -> new CountingStore(InMemoryRateLimitStore.builder().build()))
		.withBean(Exports.class);

	@Test
	void aBlockingCallTakesItsPermitWithItsDecisionInOneStoreCallAndHoldsItWhileItRuns() {
		this.runner.run((context) -> {
			Exports exports = context.getBean(Exports.class);
			ExecutorService threads = Executors.newFixedThreadPool(4);
			try {
				List<Future<String>> running = new ArrayList<>();
				for (int i = 0; i < 2; i++) {
					running.add(threads.submit(() -> exports.export("acme")));
				}
				assertThat(exports.entered().await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
				assertThat(holders(context, "exports", "acme")).isEqualTo(2);
				assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
					.isThrownBy(() -> exports.export("acme"))
					.withMessageContaining("Concurrency limit reached for bucket 'exports' (2 in flight)")
					.satisfies((refusal) -> assertThat(refusal.getPolicy())
						.as("the 429's policy, apart from the rate limit's")
						.isEqualTo("exports-concurrency"));
				exports.release().countDown();
				for (Future<String> call : running) {
					assertThat(call.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("export acme, permit held");
				}
				assertThat(holders(context, "exports", "acme")).isZero();
				assertThat(exports.export("acme")).as("the refusal for lack of a permit took nothing: third of 3")
					.isEqualTo("export acme, permit held");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> exports.export("acme"));
				assertThat(holders(context, "exports", "acme")).as("a call the rate limit refused holds nothing")
					.isZero();
				assertThat(exports.most().get()).isEqualTo(2);
				assertThat(store(context).calls()).isEqualTo("decideHolding=5 decide=0 acquire=0");
			}
			finally {
				threads.shutdownNow();
			}
		});
	}

	@Test
	void aCallThatThrowsGivesItsPermitBackAndTheRateLimitsFallbackHoldsNoPermit() {
		this.runner.run((context) -> {
			Exports exports = context.getBean(Exports.class);
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> exports.failing("k"));
			assertThat(holders(context, "failing", "k")).isZero();
			assertThat(exports.withFallback("k")).isEqualTo("live");
			assertThat(exports.withFallback("k")).isEqualTo("fallback: quota, permits held 0");
			assertThat(store(context).calls()).isEqualTo("decideHolding=3 decide=0 acquire=0");
		});
	}

	@Test
	void aCompletionStageHoldsItsPermitUntilItCompletes() {
		this.runner.run((context) -> {
			Exports exports = context.getBean(Exports.class);
			CompletableFuture<String> first = new CompletableFuture<>();
			exports.pending().add(first);
			CompletableFuture<String> call = exports.later("k").toCompletableFuture();
			assertThat(holders(context, "later", "k")).isEqualTo(1);
			assertThat(exports.later("k").toCompletableFuture()).failsWithin(TIMEOUT)
				.withThrowableOfType(ExecutionException.class)
				.withCauseInstanceOf(ConcurrencyLimitExceededException.class);
			first.complete("done");
			assertThat(call).isCompletedWithValue("done");
			assertThat(holders(context, "later", "k")).isZero();
			assertThat(store(context).calls()).isEqualTo("decideHolding=2 decide=0 acquire=0");
		});
	}

	@Test
	void aMonoOrFluxHoldsItsPermitFromSubscriptionToCompletionErrorOrCancel() {
		this.runner.run((context) -> {
			Exports exports = context.getBean(Exports.class);
			Sinks.One<String> sink = Sinks.one();
			Mono<String> mono = exports.mono("k", sink.asMono());
			assertThat(holders(context, "reactive", "k")).as("nothing held before subscription").isZero();
			StepVerifier.create(mono).then(() -> {
				awaitHolders(context, "reactive", "k", 1);
				StepVerifier.create(exports.mono("k", Mono.just("second")))
					.expectError(ConcurrencyLimitExceededException.class)
					.verify(TIMEOUT);
				sink.tryEmitValue("first");
			}).expectNext("first").expectComplete().verify(TIMEOUT);
			awaitHolders(context, "reactive", "k", 0);
			StepVerifier.create(exports.flux("k", Flux.just(1, 2).concatWith(Flux.error(new IllegalStateException()))))
				.expectNext(1, 2)
				.expectError(IllegalStateException.class)
				.verify(TIMEOUT);
			awaitHolders(context, "reactive", "k", 0);
			StepVerifier.create(exports.flux("k", Flux.never()))
				.then(() -> awaitHolders(context, "reactive", "k", 1))
				.thenCancel()
				.verify(TIMEOUT);
			awaitHolders(context, "reactive", "k", 0);
			assertThat(store(context).calls()).isEqualTo("decideHolding=4 decide=0 acquire=0");
			StepVerifier.create(exports.flux("k", Flux.just(3)))
				.expectError(RateLimitExceededException.class)
				.verify(TIMEOUT);
			awaitHolders(context, "reactive", "k", 0);
		});
	}

	@Test
	void aPermitOfAnotherBucketIsTakenFirstInACallOfItsOwn() {
		this.runner.run((context) -> {
			Exports exports = context.getBean(Exports.class);
			assertThat(exports.report("acme")).isEqualTo("report acme");
			assertThat(store(context).calls()).isEqualTo("decideHolding=0 decide=1 acquire=1");
			assertThat(holders(context, "renderers", "")).isZero();
			ConcurrencyPermit elsewhere = context.getBean(ConcurrencyLimiters.class).find("renderers").tryAcquire("");
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class).isThrownBy(() -> exports.report("acme"))
				.satisfies((refusal) -> assertThat(refusal.getPolicy()).isEqualTo("renderers"));
			assertThat(store(context).calls()).as("refused for lack of a permit: the rate limit not asked")
				.isEqualTo("decideHolding=0 decide=1 acquire=3");
			elsewhere.release();
		});
	}

	private static CountingStore store(ApplicationContext context) {
		return (CountingStore) context.getBean(RateLimitStore.class);
	}

	private static int holders(ApplicationContext context, String bucket, String key) {
		return ConcurrencyLimitedTests.holders(context, bucket, key).count();
	}

	private static void awaitHolders(ApplicationContext context, String bucket, String key, int count) {
		ConcurrencyLimitedTests.awaitHolders(context, bucket, key, count);
	}

	static class Exports {

		final CountDownLatch entered = new CountDownLatch(2);

		final CountDownLatch release = new CountDownLatch(1);

		final AtomicInteger inFlight = new AtomicInteger();

		final AtomicInteger most = new AtomicInteger();

		final List<CompletableFuture<String>> pending = new ArrayList<>();

		// Fields are read through these: the bean is a class proxy, whose own fields are
		// unset.
		CountDownLatch entered() {
			return this.entered;
		}

		CountDownLatch release() {
			return this.release;
		}

		AtomicInteger most() {
			return this.most;
		}

		List<CompletableFuture<String>> pending() {
			return this.pending;
		}

		@RateLimited(bucket = "exports", key = "#tenant", limit = 3, window = "1m", algorithm = Algorithm.FIXED_WINDOW)
		@ConcurrencyLimited(bucket = "exports", key = "#tenant", permits = 2)
		public String export(String tenant) throws InterruptedException {
			this.most.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
			this.entered.countDown();
			this.release.await(30, TimeUnit.SECONDS);
			this.inFlight.decrementAndGet();
			return "export " + tenant + (HeldPermits.current().isPresent() ? ", permit held" : ", no permit");
		}

		@RateLimited(bucket = "failing", key = "#key", limit = 5, window = "1m")
		@ConcurrencyLimited(bucket = "failing", key = "#key", permits = 1)
		public String failing(String key) {
			throw new IllegalStateException("boom");
		}

		@RateLimited(bucket = "quota", key = "#key", limit = 1, window = "1m", algorithm = Algorithm.FIXED_WINDOW,
				fallbackMethod = "fallback")
		@ConcurrencyLimited(bucket = "quota", key = "#key", permits = 1)
		public String withFallback(String key) {
			return "live";
		}

		String fallback(String key, RateLimitExceededException ex) {
			return "fallback: " + ex.getBucket() + ", permits held " + HeldPermits.current().stream().count();
		}

		@RateLimited(bucket = "later", key = "#key", limit = 10, window = "1m")
		@ConcurrencyLimited(bucket = "later", key = "#key", permits = 1)
		public CompletionStage<String> later(String key) {
			return this.pending.isEmpty() ? CompletableFuture.completedFuture("none") : this.pending.remove(0);
		}

		@RateLimited(bucket = "reactive", key = "#key", limit = 3, window = "1m", algorithm = Algorithm.FIXED_WINDOW)
		@ConcurrencyLimited(bucket = "reactive", key = "#key", permits = 1)
		public Mono<String> mono(String key, Mono<String> body) {
			return body;
		}

		@RateLimited(bucket = "reactive", key = "#key", limit = 3, window = "1m", algorithm = Algorithm.FIXED_WINDOW)
		@ConcurrencyLimited(bucket = "reactive", key = "#key", permits = 1)
		public Flux<Integer> flux(String key, Flux<Integer> body) {
			return body;
		}

		@RateLimited(bucket = "reports", key = "#tenant", limit = 5, window = "1m")
		@ConcurrencyLimited(bucket = "renderers", permits = 1)
		public String report(String tenant) {
			return "report " + tenant;
		}

	}

}
