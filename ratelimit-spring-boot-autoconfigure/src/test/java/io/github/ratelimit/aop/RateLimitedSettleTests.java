package io.github.ratelimit.aop;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.RateLimitExceededException;
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
 * {@code @RateLimited(cost = ..., settle = ...)}: a call reserves its cost and settles
 * what it really used, for every return kind, through real proxies on a manual clock.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitedSettleTests {

	private static final long LIMIT = 1000;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class))
		.withUserConfiguration(ManualTimeConfiguration.class)
		.withBean(BucketRegistry.class, () -> new BucketRegistry(LimitSettings.NONE, Map.of()))
		.withBean(Completions.class);

	@Test
	void aCallReservesItsCostAndSettlesWhatItUsed() {
		this.runner.run((context) -> {
			Completions completions = context.getBean(Completions.class);
			completions.complete("key", 100, "x".repeat(30));
			assertThat(used(context, "tokens", "key")).as("30 used of 100 reserved").isEqualTo(30);
			completions.complete("key", 100, "x".repeat(250));
			assertThat(used(context, "tokens", "key")).as("250 used of 100 reserved").isEqualTo(280);
		});
	}

	@Test
	void aCallThatUsedMoreThanIsLeftPutsTheKeyIntoDebt() {
		this.runner.run((context) -> {
			Completions completions = context.getBean(Completions.class);
			completions.complete("key", 10, "x".repeat(1500));
			long intoMinute = context.getBean(ManualTimeSource.class).nowMicros() % 60_000_000L;
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> completions.complete("key", 1, "x"))
				.satisfies((ex) -> assertThat(ex.getDecision().retryAfter())
					.as("the rest of the minute until the window is full again, then 500 tokens at 1000 a minute")
					.isEqualTo(Duration.ofSeconds(60 + 30).minus(Duration.ofNanos(intoMinute * 1000))));
		});
	}

	@Test
	void aCompletionStageAndAMonoSettleWhatTheyCompletedWith() {
		this.runner.run((context) -> {
			Completions completions = context.getBean(Completions.class);
			assertThat(completions.completeAsync("stage", 100, "x".repeat(40)).toCompletableFuture().join())
				.hasSize(40);
			assertThat(used(context, "tokens", "stage")).isEqualTo(40);
			StepVerifier.create(completions.completeMono("mono", 100, "x".repeat(70)))
				.expectNextCount(1)
				.verifyComplete();
			assertThat(used(context, "tokens", "mono")).isEqualTo(70);
		});
	}

	@Test
	void aFluxSettlesTheSumOfItsElementsWhenItCompletesOrIsCancelled() {
		this.runner.run((context) -> {
			Completions completions = context.getBean(Completions.class);
			StepVerifier.create(completions.stream("stream", 100, List.of("abc", "de", "fghij")))
				.expectNextCount(3)
				.verifyComplete();
			assertThat(used(context, "tokens", "stream")).isEqualTo(10);
			StepVerifier.create(completions.stream("cancelled", 100, List.of("abc", "de", "fghij")))
				.expectNext("abc")
				.thenCancel()
				.verify();
			assertThat(used(context, "tokens", "cancelled")).as("what it streamed before the cancel").isEqualTo(3);
		});
	}

	@Test
	void aFailedCallKeepsItsEstimateUnlessSettleOnErrorSaysOtherwise() {
		this.runner.run((context) -> {
			Completions completions = context.getBean(Completions.class);
			assertThatIllegalStateException().isThrownBy(() -> completions.failing("kept"));
			assertThat(used(context, "failing", "kept")).isEqualTo(100);
			assertThatIllegalStateException().isThrownBy(() -> completions.failingGivesBack("given"));
			assertThat(used(context, "failingGivesBack", "given")).isZero();
			StepVerifier.create(completions.streamFailing("streamed", 5, "#settled"))
				.expectNextCount(2)
				.verifyError(IllegalStateException.class);
			assertThat(used(context, "streamFailing", "streamed")).as("what it streamed before failing").isEqualTo(7);
		});
	}

	@Test
	void aFailedStreamKeepsTheLargerOfItsEstimateAndWhatItStreamed() {
		this.runner.run((context) -> {
			Completions completions = context.getBean(Completions.class);
			StepVerifier.create(completions.streamFailingKeepingEstimate("small", 10))
				.expectNextCount(2)
				.verifyError(IllegalStateException.class);
			assertThat(used(context, "streamFailingKeepingEstimate", "small")).isEqualTo(10);
			StepVerifier.create(completions.streamFailingKeepingEstimate("large", 2))
				.expectNextCount(2)
				.verifyError(IllegalStateException.class);
			assertThat(used(context, "streamFailingKeepingEstimate", "large")).isEqualTo(7);
		});
	}

	@Test
	void aNegativeSettlementSettlesZeroAndANonNumberKeepsTheEstimateBothLoggedOnce(CapturedOutput output) {
		this.runner.run((context) -> {
			Completions completions = context.getBean(Completions.class);
			completions.negative("negative");
			completions.negative("negative");
			assertThat(used(context, "negative", "negative")).isZero();
			completions.notANumber("text");
			completions.notANumber("text");
			assertThat(used(context, "notANumber", "text")).isEqualTo(2 * 100);
		});
		assertThat(output).containsOnlyOnce("'-5' must not be negative but was -5; such calls settle 0")
			.containsOnlyOnce("''many'' must evaluate to a whole number but was 'many' (String); such calls keep"
					+ " their estimate");
	}

	@Test
	void settleOnErrorWithoutSettleFailsAtStartupNamingTheMethod() {
		this.runner.withBean(Misconfigured.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("settleOnError")
				.hasMessageContaining("Misconfigured.call()")
				.hasMessageContaining("there is no settle");
		});
	}

	private static long used(AssertableApplicationContext context, String bucket, String key) {
		InMemoryRateLimitStore store = context.getBean(InMemoryRateLimitStore.class);
		BucketRegistry registry = context.getBean(BucketRegistry.class);
		BucketDefinition definition = registry.find(bucket);
		assertThat(definition).isNotNull();
		Decision peeked = store.peek(bucket, key, definition.limits());
		return LIMIT - peeked.remaining();
	}

	static class Completions {

		private final AtomicInteger calls = new AtomicInteger();

		@RateLimited(bucket = "tokens", key = "#apiKey", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "#maxTokens", settle = "#result.length()")
		String complete(String apiKey, long maxTokens, String text) {
			this.calls.incrementAndGet();
			return text;
		}

		@RateLimited(bucket = "tokens", key = "#apiKey", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "#maxTokens", settle = "#result.length()")
		CompletionStage<String> completeAsync(String apiKey, long maxTokens, String text) {
			return CompletableFuture.supplyAsync(() -> text);
		}

		@RateLimited(bucket = "tokens", key = "#apiKey", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "#maxTokens", settle = "#result.length()")
		Mono<String> completeMono(String apiKey, long maxTokens, String text) {
			return Mono.just(text);
		}

		@RateLimited(bucket = "tokens", key = "#apiKey", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "#maxTokens", settle = "#result.length()")
		Flux<String> stream(String apiKey, long maxTokens, List<String> chunks) {
			return Flux.fromIterable(chunks);
		}

		@RateLimited(bucket = "failing", key = "#key", limit = LIMIT, window = "1m", algorithm = Algorithm.FIXED_WINDOW,
				cost = "100", settle = "#result")
		long failing(String key) {
			throw new IllegalStateException("no completion");
		}

		@RateLimited(bucket = "failingGivesBack", key = "#key", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "100", settle = "#result", settleOnError = "0")
		long failingGivesBack(String key) {
			throw new IllegalStateException("no completion");
		}

		@RateLimited(bucket = "streamFailing", key = "#key", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "#estimate", settle = "#result.length()",
				settleOnError = "#settled")
		Flux<String> streamFailing(String key, long estimate, String rule) {
			return Flux.just("abc", "defg").concatWith(Flux.error(new IllegalStateException("backend gone")));
		}

		@RateLimited(bucket = "streamFailingKeepingEstimate", key = "#key", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "#estimate", settle = "#result.length()")
		Flux<String> streamFailingKeepingEstimate(String key, long estimate) {
			return Flux.just("abc", "defg").concatWith(Flux.error(new IllegalStateException("backend gone")));
		}

		@RateLimited(bucket = "negative", key = "#key", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "100", settle = "-5")
		String negative(String key) {
			return key;
		}

		@RateLimited(bucket = "notANumber", key = "#key", limit = LIMIT, window = "1m",
				algorithm = Algorithm.FIXED_WINDOW, cost = "100", settle = "'many'")
		String notANumber(String key) {
			return key;
		}

	}

	static class Misconfigured {

		@RateLimited(limit = 10, window = "1m", settleOnError = "0")
		void call() {
		}

	}

}
