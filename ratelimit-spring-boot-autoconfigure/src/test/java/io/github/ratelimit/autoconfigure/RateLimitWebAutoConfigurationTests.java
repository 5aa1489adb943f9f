package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.web.servlet.HandlerExceptionResolver;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.servlet.RateLimitExceptionResolver;
import io.github.ratelimit.web.servlet.RateLimitFilter;
import io.github.ratelimit.web.servlet.ResponseHeadersObserver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conditions of {@link RateLimitWebAutoConfiguration}.
 */
class RateLimitWebAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class));

	@Test
	void aServletApplicationGetsTheResolverTheObserverAndTheFilterRules() {
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].bucket=api", "ratelimit.filter.rules[0].paths=/api/**",
					"ratelimit.filter.rules[0].key=#request.remoteAddr", "ratelimit.filter.rules[0].limit=10",
					"ratelimit.filter.rules[0].window=1s")
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitExceptionResolver.class)
					.hasSingleBean(ResponseHeadersObserver.class);
				FilterRegistrationBean<?> registration = context.getBean("rateLimitFilterRegistration",
						FilterRegistrationBean.class);
				assertThat(registration.isEnabled()).isTrue();
				assertThat(registration.getOrder()).isEqualTo(-110);
				assertThat(((RateLimitFilter) registration.getFilter()).getRules()).hasSize(1);
				assertThat(context.getBean(BucketRegistry.class).find("api").source()).isEqualTo(BucketSource.FILTER);
			});
	}

	@Test
	void withoutRulesTheFilterStaysOutOfTheChain() {
		this.runner.run((context) -> assertThat(
				context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class).isEnabled())
			.isFalse());
	}

	@Test
	void theFilterCanBeDisabledAndReordered() {
		this.runner.withPropertyValues("ratelimit.filter.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean("rateLimitFilterRegistration"));
		this.runner
			.withPropertyValues("ratelimit.filter.order=5", "ratelimit.filter.rules[0].paths=/x",
					"ratelimit.filter.rules[0].limit=1", "ratelimit.filter.rules[0].window=1s")
			.run((context) -> assertThat(
					context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class).getOrder())
				.isEqualTo(5));
	}

	@Test
	void aRuleWithoutBucketNameGetsOneFromItsIndex() {
		this.runner.withPropertyValues("ratelimit.filter.rules[0].paths=/x", "ratelimit.filter.rules[0].limit=3")
			.run((context) -> assertThat(context.getBean(BucketRegistry.class).find("filter-0").limits().get(0).limit())
				.isEqualTo(3));
	}

	@Test
	void configurationOverridesAFilterRulesOwnLimits() {
		this.runner
			.withPropertyValues("ratelimit.filter.rules[0].bucket=api", "ratelimit.filter.rules[0].limit=10",
					"ratelimit.buckets.api.limit=4")
			.run((context) -> assertThat(context.getBean(BucketRegistry.class).find("api").limits().get(0).limit())
				.isEqualTo(4));
	}

	@Test
	void aBadKeyExpressionFailsStartupNamingTheRuleAndTheExpression() {
		this.runner.withPropertyValues("ratelimit.filter.rules[0].key=#request.(").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("ratelimit.filter.rules[0].key")
				.contains("#request.(");
		});
	}

	@Test
	void aBadLimitInARuleFailsStartupNamingTheRuleProperty() {
		this.runner.withPropertyValues("ratelimit.filter.rules[0].limit=-1").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("ratelimit.filter.rules[0].limit");
		});
	}

	@Test
	void aBadMethodFailsStartupNamingTheRule() {
		this.runner.withPropertyValues("ratelimit.filter.rules[0].methods=FETCH").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context.getStartupFailure())).contains("ratelimit.filter.rules[0].methods")
				.contains("FETCH");
		});
	}

	@Test
	void theHeadersModeComesFromConfigurationAndUserBeansWin() {
		RateLimitHeaders own = new RateLimitHeaders(HeadersMode.NONE);
		this.runner.withBean(RateLimitHeaders.class, () -> own)
			.run((context) -> assertThat(context.getBean(RateLimitHeaders.class)).isSameAs(own));
	}

	@Test
	void aNonWebApplicationGetsNoWebBeans() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitWebAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(Acquirer.class)
				.doesNotHaveBean(RateLimitExceptionResolver.class)
				.doesNotHaveBean(ResponseHeadersObserver.class));
	}

	@Test
	void withoutSpringMvcThereAreNoWebBeans() {
		this.runner.withClassLoader(new FilteredClassLoader(HandlerExceptionResolver.class))
			.run((context) -> assertThat(context).hasSingleBean(Acquirer.class)
				.doesNotHaveBean(RateLimitExceptionResolver.class));
	}

	@Test
	void disabledRateLimitingAddsNothingToTheWebApplication() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitExceptionResolver.class)
				.doesNotHaveBean("rateLimitFilterRegistration"));
	}

	private static String messages(Throwable failure) {
		StringBuilder messages = new StringBuilder();
		for (Throwable t = failure; t != null; t = t.getCause()) {
			messages.append(t.getMessage()).append('\n');
		}
		return messages.toString();
	}

}
