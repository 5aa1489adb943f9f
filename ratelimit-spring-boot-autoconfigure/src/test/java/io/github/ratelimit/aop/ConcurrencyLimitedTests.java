package io.github.ratelimit.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
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

import io.github.ratelimit.annotation.ConcurrencyLimited;
import io.github.ratelimit.autoconfigure.RateLimitAopAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.bucket.InvalidConcurrencyLimitException;
import io.github.ratelimit.concurrency.ConcurrencyLimitExceededException;
import io.github.ratelimit.concurrency.Holders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @ConcurrencyLimited} on every return kind: a permit is held while the call runs
 * and given back once when it returns, throws, completes, fails or is cancelled.
 */
class ConcurrencyLimitedTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class))
		.withBean(Reports.class);

	@Test
	void blockingCallsNeverHaveMoreThanThePermitsInFlightAndTheRestAreRejected() {
		this.runner.run((context) -> {
			Reports reports = context.getBean(Reports.class);
			ExecutorService threads = Executors.newFixedThreadPool(8);
			try {
				List<Future<String>> calls = new ArrayList<>();
				for (int i = 0; i < 8; i++) {
					calls.add(threads.submit(() -> reports.render("acme")));
				}
				assertThat(reports.entered().await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
				int rejected = 0;
				int rendered = 0;
				// Rejections come back at once; the three admitted wait for the release.
				long deadline = System.nanoTime() + TIMEOUT.toNanos();
				while (rejected < 5 && System.nanoTime() < deadline) {
					rejected = (int) calls.stream().filter(Future::isDone).count();
					Thread.sleep(5);
				}
				assertThat(holders(context, "reports", "acme").count()).isEqualTo(3);
				reports.release().countDown();
				for (Future<String> call : calls) {
					try {
						assertThat(call.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("report acme");
						rendered++;
					}
					catch (java.util.concurrent.ExecutionException ex) {
						assertThat(ex.getCause()).isInstanceOf(ConcurrencyLimitExceededException.class)
							.hasMessageContaining("Concurrency limit reached for bucket 'reports' (3 in flight)");
					}
				}
				assertThat(rendered).isEqualTo(3);
				assertThat(reports.most().get()).isEqualTo(3);
				assertThat(holders(context, "reports", "acme")).isEqualTo(Holders.NONE);
				assertThat(holders(context, "reports", "other")).isEqualTo(Holders.NONE);
			}
			finally {
				threads.shutdownNow();
			}
		});
	}

	@Test
	void aCallThatThrowsGivesItsPermitBackAndConfigurationOverridesTheAnnotation() {
		this.runner.withPropertyValues("ratelimit.concurrency.failing.permits=1").run((context) -> {
			Reports reports = context.getBean(Reports.class);
			for (int i = 0; i < 3; i++) {
				assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> reports.fail("k"));
			}
			assertThat(holders(context, "failing", "k")).isEqualTo(Holders.NONE);
			assertThat(context.getBean(ConcurrencyLimiters.class).find("failing").limit().permits()).isEqualTo(1);
		});
	}

	@Test
	void aCompletionStageHoldsItsPermitUntilItCompletes() {
		this.runner.run((context) -> {
			Reports reports = context.getBean(Reports.class);
			CompletableFuture<String> first = new CompletableFuture<>();
			reports.pending().add(first);
			CompletableFuture<String> call = reports.later("k");
			assertThat(holders(context, "later", "k").count()).isEqualTo(1);
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class).isThrownBy(() -> reports.later("k"));
			first.complete("done");
			assertThat(call).isCompletedWithValue("done");
			assertThat(holders(context, "later", "k")).isEqualTo(Holders.NONE);
		});
	}

	@Test
	void aMonoOrFluxHoldsItsPermitFromSubscriptionToCompletionErrorOrCancel() {
		this.runner.run((context) -> {
			Reports reports = context.getBean(Reports.class);
			Sinks.One<String> sink = Sinks.one();
			Mono<String> mono = reports.mono("k", sink.asMono());
			assertThat(holders(context, "reactive", "k")).as("nothing held before subscription")
				.isEqualTo(Holders.NONE);
			StepVerifier.create(mono).then(() -> {
				awaitHolders(context, "reactive", "k", 1);
				StepVerifier.create(reports.mono("k", Mono.just("second")))
					.expectError(ConcurrencyLimitExceededException.class)
					.verify(TIMEOUT);
				sink.tryEmitValue("first");
			}).expectNext("first").expectComplete().verify(TIMEOUT);
			awaitHolders(context, "reactive", "k", 0);
			StepVerifier.create(reports.flux("k", Flux.just(1, 2).concatWith(Flux.error(new IllegalStateException()))))
				.expectNext(1, 2)
				.expectError(IllegalStateException.class)
				.verify(TIMEOUT);
			awaitHolders(context, "reactive", "k", 0);
			StepVerifier.create(reports.flux("k", Flux.never()))
				.then(() -> awaitHolders(context, "reactive", "k", 1))
				.thenCancel()
				.verify(TIMEOUT);
			awaitHolders(context, "reactive", "k", 0);
		});
	}

	@Test
	void aBucketWithNoPermitsOrABadLeaseFailsStartupNamingTheProperty() {
		this.runner.withBean(NoPermits.class).run((context) -> {
			assertThat(context).hasFailed();
			InvalidConcurrencyLimitException invalid = cause(context.getStartupFailure());
			assertThat(invalid.getMessage())
				.isEqualTo("ratelimit.concurrency.unset.permits: must be set (neither @ConcurrencyLimited on"
						+ " NoPermits.call() nor configuration sets it)");
			assertThat(invalid.getAction()).contains("ratelimit.concurrency.unset.permits=10");
		});
		this.runner.withBean(NoPermits.class)
			.withPropertyValues("ratelimit.concurrency.unset.permits=2", "ratelimit.concurrency.unset.lease=0s")
			.run((context) -> assertThat(cause(context.getStartupFailure()).getMessage()).isEqualTo(
					"ratelimit.concurrency.unset.lease: must be between 1s and 1d but was 0ms (it is renewed every"
							+ " third of it through the store)"));
	}

	private static InvalidConcurrencyLimitException cause(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidConcurrencyLimitException invalid) {
				return invalid;
			}
		}
		throw new AssertionError("no InvalidConcurrencyLimitException in", failure);
	}

	static Holders holders(org.springframework.context.ApplicationContext context, String bucket, String key) {
		return context.getBean(ConcurrencyLimiters.class).find(bucket).holders(key);
	}

	static void awaitHolders(org.springframework.context.ApplicationContext context, String bucket, String key,
			int count) {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (holders(context, bucket, key).count() != count) {
			assertThat(System.nanoTime()).as("%d holders of %s", count, key).isLessThan(deadline);
			Thread.onSpinWait();
		}
	}

	static class Reports {

		final CountDownLatch entered = new CountDownLatch(3);

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

		@ConcurrencyLimited(bucket = "reports", key = "#tenant", permits = 3)
		public String render(String tenant) throws InterruptedException {
			this.most.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
			this.entered.countDown();
			this.release.await(30, TimeUnit.SECONDS);
			this.inFlight.decrementAndGet();
			return "report " + tenant;
		}

		@ConcurrencyLimited(bucket = "failing", key = "#key", permits = 5)
		public String fail(String key) {
			throw new IllegalStateException("boom");
		}

		@ConcurrencyLimited(bucket = "later", key = "#key", permits = 1)
		public CompletableFuture<String> later(String key) {
			return this.pending.isEmpty() ? CompletableFuture.completedFuture("none") : this.pending.remove(0);
		}

		@ConcurrencyLimited(bucket = "reactive", key = "#key", permits = 1)
		public Mono<String> mono(String key, Mono<String> body) {
			return body;
		}

		@ConcurrencyLimited(bucket = "reactive", key = "#key", permits = 1)
		public Flux<Integer> flux(String key, Flux<Integer> body) {
			return body;
		}

	}

	static class NoPermits {

		@ConcurrencyLimited(bucket = "unset")
		public String call() {
			return "called";
		}

	}

}
