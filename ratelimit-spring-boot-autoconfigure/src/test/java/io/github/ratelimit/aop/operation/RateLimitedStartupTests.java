package io.github.ratelimit.aop.operation;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.OnLimit;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAopAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.expression.RateLimitExpressions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Every mistake in a {@code @RateLimited} fails application startup, with a message that
 * names the class, the method, the attribute and the value.
 */
class RateLimitedStartupTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class))
		.withBean(BucketRegistry.class, () -> new BucketRegistry(LimitSettings.NONE, Map.of()));

	@Test
	void badExpressionShouldFailStartupNamingClassMethodAndExpression() {
		assertStartupFails(BadKey.class,
				"Invalid SpEL in @RateLimited(key) on RateLimitedStartupTests.BadKey.login(String)", "'#username +'");
	}

	@Test
	void badExpressionInAnyAttributeShouldFailStartup() {
		assertStartupFails(BadSkipWhen.class, "@RateLimited(skipWhen) on RateLimitedStartupTests.BadSkipWhen.call()",
				"'#a ==== 1'");
	}

	@Test
	void badExpressionShouldFailStartupEvenOnAMethodAfterAValidOne() {
		// The pointcut stops at the first limited method of a class; the validator does
		// not.
		assertStartupFails(OneGoodOneBad.class, "@RateLimited(refundWhen) on RateLimitedStartupTests.OneGoodOneBad",
				"'#result.('");
	}

	@Test
	void validatorShouldParseEveryMethodOfEachBean() {
		RateLimitedOperationSource source = new RateLimitedOperationSource(
				new BucketRegistry(LimitSettings.NONE, Map.of()), new RateLimitExpressions(null));
		RateLimitedMethodValidator validator = new RateLimitedMethodValidator(source);
		assertThatIllegalStateException()
			.isThrownBy(() -> validator.postProcessBeforeInitialization(new OneGoodOneBad(), "oneGoodOneBad"))
			.withMessageContaining("@RateLimited(refundWhen) on RateLimitedStartupTests.OneGoodOneBad.c()");
		Object plain = new Object();
		assertThat(validator.postProcessBeforeInitialization(plain, "plain")).isSameAs(plain);
	}

	@Test
	void waitWithoutMaxWaitShouldFailStartup() {
		assertStartupFails(WaitWithoutMaxWait.class,
				"@RateLimited(onLimit) on RateLimitedStartupTests.WaitWithoutMaxWait.call(): WAIT needs maxWait");
	}

	@Test
	void refundWhenWithLeakyBucketShouldFailStartup() {
		assertStartupFails(LeakyRefund.class, "@RateLimited(refundWhen) on RateLimitedStartupTests.LeakyRefund.call()",
				"uses LEAKY_BUCKET", "'#exception == null'");
	}

	@Test
	void missingFallbackMethodShouldFailStartup() {
		assertStartupFails(MissingFallback.class,
				"@RateLimited(fallbackMethod) on RateLimitedStartupTests.MissingFallback.call(String)",
				"no method 'nowhere'", "(String) or (String, RateLimitExceededException)");
	}

	@Test
	void fallbackMethodWithAnotherReturnTypeShouldFailStartup() {
		assertStartupFails(FallbackReturnsOtherType.class,
				"@RateLimited(fallbackMethod) on RateLimitedStartupTests.FallbackReturnsOtherType.call()",
				"fallback method other returns java.lang.Integer", "it returns java.lang.String");
	}

	@Test
	void badWindowShouldFailStartup() {
		assertStartupFails(BadWindow.class, "@RateLimited(window) on RateLimitedStartupTests.BadWindow.call()",
				"'1 fortnight'");
	}

	@Test
	void badMaxWaitShouldFailStartup() {
		assertStartupFails(BadMaxWait.class, "@RateLimited(maxWait) on RateLimitedStartupTests.BadMaxWait.call()",
				"'soon'");
	}

	@Test
	void invalidLimitShouldFailStartupThroughTheRegistry() {
		assertStartupFails(NegativeLimit.class, "@RateLimited on RateLimitedStartupTests.NegativeLimit.call()",
				"attribute 'limit'", "must be positive but was -5");
	}

	@Test
	void limitSetNowhereShouldFailStartup() {
		assertStartupFails(NoLimit.class, "@RateLimited on RateLimitedStartupTests.NoLimit.call()", "attribute 'limit'",
				"must be set");
	}

	@Test
	void severalAlgorithmsShouldFailStartup() {
		assertStartupFails(TwoAlgorithms.class,
				"@RateLimited(algorithm) on RateLimitedStartupTests.TwoAlgorithms.call()", "[TOKEN_BUCKET, GCRA]");
	}

	@Test
	void costLiteralBelowOneShouldFailStartup() {
		assertStartupFails(ZeroCost.class, "@RateLimited(cost) on RateLimitedStartupTests.ZeroCost.call()",
				"must be a whole number of at least 1 but was '0' (String)");
	}

	@Test
	void validAnnotationsShouldStartAndRegisterTheirBuckets() {
		this.runner.withBean(WaitWithMaxWait.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(BucketRegistry.class).find("valid")).isNotNull();
		});
	}

	private void assertStartupFails(Class<?> bean, String... fragments) {
		this.runner.withBean(bean).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (failure != null && !(failure instanceof IllegalStateException)) {
				failure = failure.getCause();
			}
			assertThat(failure).as("an IllegalStateException in %s", context.getStartupFailure()).isNotNull();
			assertThat(failure.getMessage()).contains(fragments);
		});
	}

	static class BadKey {

		@RateLimited(key = "#username +", limit = 1, window = "1m")
		public String login(String username) {
			return username;
		}

	}

	static class BadSkipWhen {

		@RateLimited(skipWhen = "#a ==== 1", limit = 1, window = "1m")
		public String call() {
			return "";
		}

	}

	static class OneGoodOneBad {

		@RateLimited(bucket = "good1", limit = 1, window = "1m")
		public String a() {
			return "";
		}

		@RateLimited(bucket = "good2", limit = 1, window = "1m")
		public String b() {
			return "";
		}

		@RateLimited(bucket = "bad", limit = 1, window = "1m", refundWhen = "#result.(")
		public String c() {
			return "";
		}

		@RateLimited(bucket = "good3", limit = 1, window = "1m")
		public String d() {
			return "";
		}

	}

	static class WaitWithoutMaxWait {

		@RateLimited(limit = 1, window = "1m", onLimit = OnLimit.WAIT)
		public String call() {
			return "";
		}

	}

	static class WaitWithMaxWait {

		@RateLimited(bucket = "valid", limit = 1, window = "1m", onLimit = OnLimit.WAIT, maxWait = "PT2S")
		public String call() {
			return "";
		}

	}

	static class LeakyRefund {

		@RateLimited(limit = 1, window = "1m", algorithm = Algorithm.LEAKY_BUCKET, refundWhen = "#exception == null")
		public String call() {
			return "";
		}

	}

	static class MissingFallback {

		@RateLimited(limit = 1, window = "1m", fallbackMethod = "nowhere")
		public String call(String value) {
			return value;
		}

	}

	static class FallbackReturnsOtherType {

		@RateLimited(limit = 1, window = "1m", fallbackMethod = "other")
		public String call() {
			return "";
		}

		Integer other() {
			return 1;
		}

	}

	static class BadWindow {

		@RateLimited(limit = 1, window = "1 fortnight")
		public String call() {
			return "";
		}

	}

	static class BadMaxWait {

		@RateLimited(limit = 1, window = "1m", onLimit = OnLimit.WAIT, maxWait = "soon")
		public String call() {
			return "";
		}

	}

	static class NegativeLimit {

		@RateLimited(limit = -5, window = "1m")
		public String call() {
			return "";
		}

	}

	static class NoLimit {

		@RateLimited(window = "1m")
		public String call() {
			return "";
		}

	}

	static class TwoAlgorithms {

		@RateLimited(limit = 1, window = "1m", algorithm = { Algorithm.TOKEN_BUCKET, Algorithm.GCRA })
		public String call() {
			return "";
		}

	}

	static class ZeroCost {

		@RateLimited(limit = 1, window = "1m", cost = "0")
		public String call() {
			return "";
		}

	}

}
