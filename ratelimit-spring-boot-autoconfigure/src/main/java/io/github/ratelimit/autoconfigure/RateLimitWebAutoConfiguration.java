package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.servlet.HandlerExceptionResolver;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.bucket.KeyStateReader;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.web.servlet.RateLimitExceptionResolver;
import io.github.ratelimit.web.servlet.RateLimitFilter;
import io.github.ratelimit.web.servlet.RateLimitResponses;
import io.github.ratelimit.web.servlet.RateLimitStatusFilter;
import io.github.ratelimit.web.servlet.ResponseHeadersObserver;
import io.github.ratelimit.web.servlet.ServletRequestVariables;

/**
 * Rate limiting for servlet web applications: the filter for
 * {@code ratelimit.filter.rules}, limit headers on every limited response, 429 (or 503)
 * responses for rejections thrown by {@code @RateLimited} controllers, and, when
 * {@code ratelimit.status-endpoint.enabled}, the status endpoint.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ HandlerExceptionResolver.class, FilterRegistrationBean.class })
@ConditionalOnBean(Acquirer.class)
@Import(RateLimitHeadersConfiguration.class)
public final class RateLimitWebAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitResponses rateLimitResponses(RateLimitHeaders rateLimitHeaders) {
		return new RateLimitResponses(rateLimitHeaders);
	}

	@Bean
	@ConditionalOnMissingBean
	ResponseHeadersObserver rateLimitResponseHeadersObserver(RateLimitResponses rateLimitResponses) {
		return new ResponseHeadersObserver(rateLimitResponses);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitExceptionResolver rateLimitExceptionResolver(RateLimitResponses rateLimitResponses) {
		return new RateLimitExceptionResolver(rateLimitResponses);
	}

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitFilterRegistration")
	@ConditionalOnBooleanProperty(name = "ratelimit.filter.enabled", matchIfMissing = true)
	FilterRegistrationBean<RateLimitFilter> rateLimitFilterRegistration(RateLimitProperties properties,
			BucketRegistry registry, ConcurrencyLimiters concurrencyLimiters, RateLimitExpressions expressions,
			Acquirer rateLimitAcquirer, RateLimitResponses responses, ClientIpResolver clientIps) {
		FilterRules rules = FilterRulesFactory.create(properties, registry, concurrencyLimiters, expressions,
				new ServletRequestVariables(clientIps));
		RateLimitFilter filter = new RateLimitFilter(rules, rateLimitAcquirer, responses);
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setName("rateLimitFilter");
		registration.setOrder(properties.getFilter().getOrder());
		// No rules, nothing to filter: keep the filter out of the chain.
		registration.setEnabled(!rules.rules().isEmpty());
		return registration;
	}

	/**
	 * The status endpoint: a filter just before the rate limit filter, answering from the
	 * rules that filter enforces (none when it is off or was replaced by another bean).
	 */
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitStatusFilterRegistration")
	@ConditionalOnBooleanProperty(name = "ratelimit.status-endpoint.enabled")
	FilterRegistrationBean<RateLimitStatusFilter> rateLimitStatusFilterRegistration(RateLimitProperties properties,
			ObjectProvider<FilterRegistrationBean<RateLimitFilter>> rateLimitFilterRegistration,
			KeyStateReader rateLimitKeyStateReader) {
		FilterRegistrationBean<RateLimitFilter> rateLimit = rateLimitFilterRegistration.getIfUnique();
		RateLimitFilter filter = (rateLimit != null && rateLimit.isEnabled()) ? rateLimit.getFilter() : null;
		List<FilterRule> rules = (filter != null) ? filter.getRules() : List.of();
		RateLimitStatus status = new RateLimitStatus(new FilterRules(rules, properties.getFilter().getMatch()),
				rateLimitKeyStateReader, properties.getFailureMode());
		FilterRegistrationBean<RateLimitStatusFilter> registration = new FilterRegistrationBean<>(
				new RateLimitStatusFilter(status, properties.getStatusEndpoint().getPath()));
		registration.setName("rateLimitStatusFilter");
		registration.setOrder(properties.getFilter().getOrder() - 1);
		return registration;
	}

}
