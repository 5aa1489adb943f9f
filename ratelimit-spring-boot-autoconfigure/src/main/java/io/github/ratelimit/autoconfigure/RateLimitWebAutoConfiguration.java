package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.HandlerExceptionResolver;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.autoconfigure.RateLimitProperties.Rule;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.servlet.RateLimitExceptionResolver;
import io.github.ratelimit.web.servlet.RateLimitFilter;
import io.github.ratelimit.web.servlet.RateLimitResponses;
import io.github.ratelimit.web.servlet.ResponseHeadersObserver;

/**
 * Rate limiting for servlet web applications: the filter for
 * {@code ratelimit.filter.rules}, limit headers on every limited response, and 429 (or
 * 503) responses for rejections thrown by {@code @RateLimited} controllers.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ HandlerExceptionResolver.class, FilterRegistrationBean.class })
@ConditionalOnBean(Acquirer.class)
public final class RateLimitWebAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitHeaders rateLimitHeaders(RateLimitProperties properties) {
		return new RateLimitHeaders(properties.getHeaders());
	}

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
			BucketRegistry registry, RateLimitExpressions expressions, Acquirer rateLimitAcquirer,
			RateLimitResponses responses) {
		List<FilterRule> rules = new ArrayList<>();
		List<Rule> configured = properties.getFilter().getRules();
		for (int i = 0; i < configured.size(); i++) {
			Rule rule = configured.get(i);
			String name = "ratelimit.filter.rules[" + i + "]";
			String bucketName = (rule.getBucket() != null && !rule.getBucket().isBlank()) ? rule.getBucket()
					: "filter-" + i;
			BucketDefinition bucket = registry.register(bucketName, RateLimitSettingsMapper.limit(rule),
					BucketSource.FILTER, name);
			rules.add(FilterRule.builder(name, bucket::bucket)
				.paths(rule.getPaths())
				.methods(rule.getMethods())
				.key(rule.getKey())
				.cost(rule.getCost())
				.nullKeyPolicy(properties.getNullKey())
				.build(expressions, HttpServletRequest.class));
		}
		RateLimitFilter filter = new RateLimitFilter(new FilterRules(rules, properties.getFilter().getMatch()),
				rateLimitAcquirer, responses);
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setName("rateLimitFilter");
		registration.setOrder(properties.getFilter().getOrder());
		// No rules, nothing to filter: keep the filter out of the chain.
		registration.setEnabled(!rules.isEmpty());
		return registration;
	}

}
