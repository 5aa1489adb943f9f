package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.web.server.WebFilter;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.reactive.RateLimitWebExceptionHandler;
import io.github.ratelimit.web.reactive.RateLimitWebFilter;
import io.github.ratelimit.web.reactive.ReactiveRateLimitResponses;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conditions of {@link RateLimitWebFluxAutoConfiguration}, and the startup warning for
 * filter rules that no filter applies.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitWebFluxAutoConfigurationTests {

	private static final String[] ONE_RULE = { "ratelimit.filter.rules[0].bucket=api",
			"ratelimit.filter.rules[0].paths=/api/**", "ratelimit.filter.rules[0].key=#clientIp",
			"ratelimit.filter.rules[0].limit=10", "ratelimit.filter.rules[0].window=1s" };

	private static final AutoConfigurations WEB = AutoConfigurations.of(RateLimitAutoConfiguration.class,
			RateLimitWebAutoConfiguration.class, RateLimitWebFluxAutoConfiguration.class);

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(WEB);

	@Test
	void aReactiveApplicationGetsTheFilterTheHandlerAndTheRules(CapturedOutput output) {
		this.runner.withPropertyValues(ONE_RULE).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitWebExceptionHandler.class)
				.hasSingleBean(ReactiveRateLimitResponses.class)
				.doesNotHaveBean("rateLimitFilterRegistration");
			RateLimitWebFilter filter = context.getBean(RateLimitWebFilter.class);
			assertThat(filter.getRules()).hasSize(1);
			assertThat(filter.getOrder()).isEqualTo(-110);
			assertThat(context.getBean(RateLimitWebExceptionHandler.class).getOrder()).isEqualTo(-2);
			assertThat(context.getBean(BucketRegistry.class).find("api").source()).isEqualTo(BucketSource.FILTER);
		});
		assertThat(output).doesNotContain("ratelimit.filter.rules has");
	}

	@Test
	void withoutRulesTheFilterPassesEverythingOn() {
		this.runner.run((context) -> assertThat(context.getBean(RateLimitWebFilter.class).getRules()).isEmpty());
	}

	@Test
	void theFilterCanBeDisabledAndReordered() {
		this.runner.withPropertyValues("ratelimit.filter.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitWebFilter.class)
				.hasSingleBean(RateLimitWebExceptionHandler.class));
		this.runner.withPropertyValues("ratelimit.filter.order=5")
			.run((context) -> assertThat(context.getBean(RateLimitWebFilter.class).getOrder()).isEqualTo(5));
	}

	@Test
	void aServletPropertyInAReactiveRuleFailsStartupWithTheReactiveWay() {
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].paths=/x",
					"ratelimit.filter.rules[0].key=#request.remoteAddr")
			.run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = new InvalidRateLimitConfigurationFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis).isNotNull();
				assertThat(analysis.getDescription()).contains("ratelimit.filter.rules[0].key")
					.contains("#request.remoteAddr")
					.contains("#clientIp");
				assertThat(analysis.getAction()).contains("ratelimit.filter.rules[0]");
			});
	}

	@Test
	void userBeansWin() {
		RateLimitHeaders own = new RateLimitHeaders(HeadersMode.NONE);
		this.runner.withBean(RateLimitHeaders.class, () -> own)
			.run((context) -> assertThat(context.getBean(ReactiveRateLimitResponses.class)).isNotNull()
				.satisfies((responses) -> assertThat(context.getBean(RateLimitHeaders.class)).isSameAs(own)));
		this.runner.withBean("myFilter", RateLimitWebFilter.class, () -> null)
			.run((context) -> assertThat(context).doesNotHaveBean("rateLimitWebFilter"));
	}

	@Test
	void aServletApplicationGetsNoReactiveBeans() {
		new WebApplicationContextRunner().withConfiguration(WEB)
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitWebFilter.class)
				.doesNotHaveBean(RateLimitWebExceptionHandler.class)
				.hasBean("rateLimitFilterRegistration"));
	}

	@Test
	void withoutSpringWebTheReactiveBeansBackOff() {
		this.runner.withClassLoader(new FilteredClassLoader(WebFilter.class))
			.run((context) -> assertThat(context).hasSingleBean(Acquirer.class)
				.doesNotHaveBean(RateLimitWebExceptionHandler.class));
	}

	@Test
	void rulesInANonWebApplicationAreReportedWithTheProperty(CapturedOutput output) {
		new ApplicationContextRunner().withConfiguration(WEB).withPropertyValues(ONE_RULE).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(RateLimitWebFilter.class);
		});
		assertThat(output).contains("ratelimit.filter.rules has 1 rule but nothing applies them")
			.contains("spring-boot-starter-webflux")
			.contains("ratelimit.filter.enabled=false");
	}

	@Test
	void rulesTurnedOffOrAbsentAreNotReported(CapturedOutput output) {
		new ApplicationContextRunner().withConfiguration(WEB)
			.withPropertyValues(ONE_RULE)
			.withPropertyValues("ratelimit.filter.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed());
		new ApplicationContextRunner().withConfiguration(WEB).run((context) -> assertThat(context).hasNotFailed());
		new WebApplicationContextRunner().withConfiguration(WEB)
			.withPropertyValues(ONE_RULE)
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain("ratelimit.filter.rules has");
	}

}
