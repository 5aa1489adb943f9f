package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.bucket.LiveLimits.ChangeRejectedException;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.InvalidFilterRuleException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * One rule for every limit: what startup refuses, a live change through the endpoint
 * refuses with the same message; and a value every way of setting a limit refuses
 * (property, annotation, filter rule, per-call {@code limitExpression}, the endpoint's
 * per-call read) is refused in the same words after each one's own name of the value, as
 * is a cost, whether a literal or an expression, of an annotation or a filter rule.
 */
class LimitValidationContractTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAopAutoConfiguration.class,
				RateLimitEndpointAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
				"ratelimit.endpoint.limits-write-enabled=true");

	static Stream<Arguments> refusedSettings() {
		return Stream.of(
				refused("negative limit", Map.of("limit", "-1"),
						"ratelimit.buckets.api.limit: must be positive but was -1"),
				refused("zero window", Map.of("window", "0s"),
						"ratelimit.buckets.api.window: must be positive but was 0ms"),
				refused("window under 1ms", Map.of("window", "999us"),
						"ratelimit.buckets.api.window: must be at least 1ms but was 999us"),
				refused("window with a fraction of a microsecond", Map.of("window", "1000500ns"),
						"ratelimit.buckets.api.window: must be a whole number of microseconds but was PT0.0010005S"),
				refused("burst below 1", Map.of("algorithm", "token-bucket", "burst", "0"),
						"ratelimit.buckets.api.burst: must be positive but was 0"),
				refused("segments below 2", Map.of("algorithm", "sliding-window-counter", "segments", "1"),
						"ratelimit.buckets.api.segments: must be at least 2 but was 1"),
				refused("negative penalty", Map.of("penalty", "-1m"),
						"ratelimit.buckets.api.penalty: must not be negative but was -1m"),
				refused("penalty over 50 years", Map.of("penalty", "18251d"),
						"ratelimit.buckets.api.penalty: must be at most 18250d but was 18251d"),
				refused("calendar with an algorithm that refills",
						Map.of("algorithm", "token-bucket", "calendar", "month"),
						"ratelimit.buckets.api.calendar: month counts by the calendar, which only fixed-window does (the"
								+ " algorithm is token-bucket); set the algorithm to fixed-window, or use a window"
								+ " instead"),
				refused("unknown calendar unit", Map.of("algorithm", "fixed-window", "calendar", "fortnight"),
						"ratelimit.buckets.api.calendar: must be day, week, month, quarter or year but was fortnight;"
								+ " use one of day, week, month, quarter, year"),
				refused("unknown zone", Map.of("algorithm", "fixed-window", "calendar", "day", "zone", "Mars/Base"),
						"ratelimit.buckets.api.zone: is not a time zone (Unknown time-zone ID: Mars/Base) but was"
								+ " Mars/Base; use an IANA id such as Europe/Berlin or America/New_York, or UTC"),
				refused("zone without a calendar", Map.of("zone", "Europe/Berlin"),
						"ratelimit.buckets.api.zone: only applies to a calendar window but was Europe/Berlin; set"
								+ " calendar (day, week, month, quarter or year), or remove the zone"),
				refused("sliding-log does not take a limit that large",
						Map.of("algorithm", "sliding-log", "limit", "2000000"),
						"ratelimit.buckets.api.limit: must be at most 1000000 with sliding-log (it keeps one entry per"
								+ " permit) but was 2000000; use sliding-window-counter for larger limits"),
				refused("sliding-window-counter does not take sub-windows under 1ms",
						Map.of("algorithm", "sliding-window-counter", "window", "10ms", "segments", "11"),
						"ratelimit.buckets.api.segments: must be at most 10 with window 10ms (each sub-window must be"
								+ " at least 1ms) but was 11"),
				refused("token-bucket does not take more than a permit per nanosecond",
						Map.of("algorithm", "token-bucket", "limit", "2000000", "window", "1ms"),
						"ratelimit.buckets.api.limit: must be at most 1000000 per window 1ms with token-bucket (one"
								+ " permit per nanosecond) but was 2000000"),
				refused("gcra does not take a burst that takes over 104 days to refill",
						Map.of("algorithm", "gcra", "limit", "1", "window", "1d", "burst", "105"),
						"ratelimit.buckets.api.burst: must be at most 104 with limit 1 per window 1d (a longer refill"
								+ " than 104 days is not kept exactly) but was 105; use a smaller burst or window"),
				Arguments.of("leaky-bucket on a method with refundWhen", "refunds", Refunds.class,
						Map.of("algorithm", "leaky-bucket"),
						"@RateLimited(refundWhen) on LimitValidationContractTests.Refunds.call(): bucket 'refunds'"
								+ " uses LEAKY_BUCKET, whose slots cannot be given back once handed out ([10/1m"
								+ " leaky-bucket]); remove refundWhen '#result == null' or choose another algorithm"));
	}

	private static Arguments refused(String name, Map<String, String> settings, String message) {
		return Arguments.of(name, "api", null, settings, message);
	}

	@Test
	void theActionForAMistakeWithAHintIsTheHintAndOtherwiseAnExampleOfTheField() {
		this.runner
			.withPropertyValues("ratelimit.buckets.api.limit=10", "ratelimit.buckets.api.calendar=month",
					"ratelimit.buckets.api.zone=Europe/Berlinn")
			.run((context) -> assertThat(
					new InvalidRateLimitConfigurationFailureAnalyzer().analyze(context.getStartupFailure()).getAction())
				.isEqualTo("Fix ratelimit.buckets.api.zone: use an IANA id such as Europe/Berlin or America/New_York,"
						+ " or UTC, or remove it to use ratelimit.defaults.zone."));
		this.runner.withPropertyValues("ratelimit.buckets.quota.limit=10", "ratelimit.buckets.quota.penalty=-5m")
			.run((context) -> assertThat(
					new InvalidRateLimitConfigurationFailureAnalyzer().analyze(context.getStartupFailure()).getAction())
				.isEqualTo("Set ratelimit.buckets.quota.penalty to a value that is not negative, e.g."
						+ " ratelimit.buckets.quota.penalty=15m, or remove it to use ratelimit.defaults.penalty."));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("refusedSettings")
	void theLiveEndpointRefusesWhatStartupRefusesWithTheSameMessage(String name, String bucket, @Nullable Class<?> user,
			Map<String, String> settings, String message) {
		ApplicationContextRunner runner = this.runner.withPropertyValues("ratelimit.buckets." + bucket + ".limit=10",
				"ratelimit.buckets." + bucket + ".window=1m");
		if (user != null) {
			runner = runner.withBean(user);
		}
		List<String> bad = new ArrayList<>();
		settings.forEach((field, value) -> bad.add("ratelimit.buckets." + bucket + "." + field + "=" + value));
		runner.withPropertyValues(bad.toArray(String[]::new)).run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = new InvalidRateLimitConfigurationFailureAnalyzer()
				.analyze(context.getStartupFailure());
			assertThat(analysis).as("failure analysis of %s", context.getStartupFailure()).isNotNull();
			assertThat(analysis.getDescription()).isEqualTo(message);
		});
		runner.run((context) -> {
			assertThat(context).hasNotFailed();
			RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
			assertThatExceptionOfType(ChangeRejectedException.class)
				.isThrownBy(() -> endpoint.setLimits(bucket, settings.get("limit"), settings.get("window"),
						settings.get("burst"), settings.get("segments"), settings.get("penalty"),
						settings.get("calendar"), settings.get("zone"), settings.get("algorithm"), null,
						SecurityContext.NONE))
				.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(ChangeRejectedException.Reason.INVALID))
				.withMessage(message);
		});
	}

	static Stream<Arguments> refusedLimits() {
		return Stream.of(Arguments.of(-1L, "must be positive but was -1"),
				Arguments.of(2_000_000L, "must be at most 1000000 with sliding-log (it keeps one entry per permit)"
						+ " but was 2000000; use sliding-window-counter for larger limits"));
	}

	@ParameterizedTest(name = "limit {0}")
	@MethodSource("refusedLimits")
	void everyWayOfSettingALimitRefusesItInTheSameWords(long limit, String problem) {
		Map<String, String> messages = new LinkedHashMap<>();
		this.runner
			.withPropertyValues("ratelimit.buckets.api.algorithm=sliding-log", "ratelimit.buckets.api.limit=" + limit)
			.run((context) -> messages.put("property", analyzed(context.getStartupFailure())));
		Class<?> annotated = (limit < 0) ? AnnotatedNegativeLimit.class : AnnotatedLargeLimit.class;
		this.runner.withPropertyValues("ratelimit.defaults.algorithm=sliding-log")
			.withBean(annotated)
			.run((context) -> messages.put("annotation", analyzed(context.getStartupFailure())));
		new WebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class))
			.withPropertyValues("ratelimit.filter.rules[0].paths=/**",
					"ratelimit.filter.rules[0].algorithm=sliding-log", "ratelimit.filter.rules[0].limit=" + limit)
			.run((context) -> messages.put("filter rule", analyzed(context.getStartupFailure())));
		this.runner.withPropertyValues("ratelimit.defaults.algorithm=sliding-log")
			.withBean(PerCallLimit.class)
			.run((context) -> {
				PerCallLimit service = context.getBean(PerCallLimit.class);
				assertThatIllegalArgumentException().isThrownBy(() -> service.call(limit))
					.satisfies((ex) -> messages.put("limitExpression", ex.getMessage()));
				RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
				assertThatExceptionOfType(InvalidEndpointRequestException.class)
					.isThrownBy(() -> endpoint.key("plans", "k", limit, null))
					.satisfies((ex) -> messages.put("endpoint read", ex.getMessage()));
				assertThatExceptionOfType(ChangeRejectedException.class)
					.isThrownBy(() -> endpoint.setLimits("plans", String.valueOf(limit), null, null, null, null, null,
							null, null, null, SecurityContext.NONE))
					.satisfies((ex) -> messages.put("live change", ex.getMessage()));
			});
		assertThat(messages).containsOnlyKeys("property", "annotation", "filter rule", "limitExpression",
				"endpoint read", "live change");
		assertThat(messages.get("property")).isEqualTo("ratelimit.buckets.api.limit: " + problem);
		assertThat(messages.get("annotation")).startsWith("@RateLimited on LimitValidationContractTests.Annotated")
			.endsWith(
					"(attribute 'limit', or ratelimit.buckets.annotated.limit / ratelimit.defaults.limit): " + problem);
		assertThat(messages.get("filter rule")).isEqualTo("ratelimit.filter.rules[0].limit: " + problem);
		assertThat(messages.get("limitExpression"))
			.isEqualTo("@RateLimited(limitExpression) on LimitValidationContractTests.PerCallLimit.call(long):"
					+ " '#limit' " + problem);
		assertThat(messages.get("endpoint read")).isEqualTo("limit " + problem);
		assertThat(messages.get("live change")).isEqualTo("ratelimit.buckets.plans.limit: " + problem);
	}

	@Test
	void aPerCallLimitThatAnotherSettingCannotTakeNamesThatSetting() {
		this.runner.withBean(PerCallBurst.class).run((context) -> {
			PerCallBurst service = context.getBean(PerCallBurst.class);
			assertThat(service.call(10)).isEqualTo("ok");
			assertThatIllegalArgumentException().isThrownBy(() -> service.call(1))
				.withMessage("@RateLimited(limitExpression) on LimitValidationContractTests.PerCallBurst.call(long):"
						+ " '#limit' gave limit 1, with which burst must be at most 104 with limit 1 per window 1d (a"
						+ " longer refill than 104 days is not kept exactly) but was 1000; use a smaller burst or"
						+ " window");
		});
	}

	@Test
	void everyWayOfSettingACostRefusesItInTheSameWords() {
		String problem = "must be a whole number of at least 1 but was ";
		this.runner.withBean(LiteralCost.class)
			.run((context) -> assertThat(analyzed(context.getStartupFailure()))
				.isEqualTo("@RateLimited(cost) on LimitValidationContractTests.LiteralCost.call(): " + problem
						+ "'0' (String)"));
		this.runner.withBean(ExpressionCost.class).run((context) -> {
			ExpressionCost service = context.getBean(ExpressionCost.class);
			assertThatIllegalArgumentException().isThrownBy(() -> service.call(0))
				.withMessage("@RateLimited(cost) on LimitValidationContractTests.ExpressionCost.call(long): '#cost' "
						+ problem + "0 (Long)");
		});
		RateLimitExpressions expressions = new RateLimitExpressions(null);
		Bucket bucket = Bucket.of("api", LimitSpec.of(5, "1m", Algorithm.GCRA));
		assertThatExceptionOfType(InvalidFilterRuleException.class)
			.isThrownBy(() -> FilterRule.builder("ratelimit.filter.rules[0]", bucket)
				.cost("0")
				.build(expressions, HttpServletRequest.class))
			.withMessage("ratelimit.filter.rules[0].cost '0' " + problem + "'0' (String)");
		FilterRule rule = FilterRule.builder("ratelimit.filter.rules[0]", bucket)
			.cost("1 - 1")
			.build(expressions, HttpServletRequest.class);
		assertThatIllegalStateException().isThrownBy(() -> rule.cost(new MockHttpServletRequest()))
			.withMessage("ratelimit.filter.rules[0].cost '1 - 1' " + problem + "0 (Integer)");
	}

	private static String analyzed(@Nullable Throwable failure) {
		assertThat(failure).as("startup failure").isNotNull();
		FailureAnalysis analysis = new InvalidRateLimitConfigurationFailureAnalyzer().analyze(failure);
		assertThat(analysis).as("failure analysis of %s", failure).isNotNull();
		return analysis.getDescription();
	}

	static class Refunds {

		@RateLimited(bucket = "refunds", refundWhen = "#result == null")
		public String call() {
			return "ok";
		}

	}

	static class AnnotatedNegativeLimit {

		@RateLimited(bucket = "annotated", limit = -1, window = "1m")
		public String call() {
			return "ok";
		}

	}

	static class AnnotatedLargeLimit {

		@RateLimited(bucket = "annotated", limit = 2_000_000, window = "1m")
		public String call() {
			return "ok";
		}

	}

	static class LiteralCost {

		@RateLimited(bucket = "literal-cost", limit = 10, window = "1m", cost = "0")
		public String call() {
			return "ok";
		}

	}

	static class ExpressionCost {

		@RateLimited(bucket = "expression-cost", limit = 10, window = "1m", cost = "#cost")
		public String call(long cost) {
			return "ok";
		}

	}

	static class PerCallBurst {

		@RateLimited(bucket = "burst", algorithm = Algorithm.GCRA, limit = 10, window = "1d", burst = 1000,
				limitExpression = "#limit")
		public String call(long limit) {
			return "ok";
		}

	}

	static class PerCallLimit {

		@RateLimited(bucket = "plans", algorithm = Algorithm.SLIDING_LOG, limit = 10, window = "1m",
				limitExpression = "#limit")
		public String call(long limit) {
			return "ok";
		}

	}

}
