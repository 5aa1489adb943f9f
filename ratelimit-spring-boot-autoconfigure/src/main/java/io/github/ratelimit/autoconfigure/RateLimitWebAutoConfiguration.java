package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.HandlerExceptionResolver;

import io.github.ratelimit.autoconfigure.RateLimitProperties.Rule;
import io.github.ratelimit.spring.BucketDefinition;
import io.github.ratelimit.spring.BucketRegistry;
import io.github.ratelimit.spring.BucketSource;
import io.github.ratelimit.spring.RateLimitExpressions;
import io.github.ratelimit.spring.RateLimitService;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.RateLimitExceptionResolver;
import io.github.ratelimit.web.RateLimitFilter;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitResponses;
import io.github.ratelimit.web.ResponseHeadersObserver;

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
@ConditionalOnBean(RateLimitService.class)
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
	ResponseHeadersObserver rateLimitResponseHeadersObserver(RateLimitHeaders rateLimitHeaders) {
		return new ResponseHeadersObserver(rateLimitHeaders);
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
			BucketRegistry registry, RateLimitExpressions expressions, RateLimitService service,
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
			rules.add(FilterRule.builder(name, bucket)
				.paths(rule.getPaths())
				.methods(rule.getMethods())
				.key(rule.getKey())
				.cost(rule.getCost())
				.nullKeyPolicy(properties.getNullKey())
				.build(expressions));
		}
		RateLimitFilter filter = new RateLimitFilter(rules, properties.getFilter().getMatch(), service, responses);
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setName("rateLimitFilter");
		registration.setOrder(properties.getFilter().getOrder());
		// No rules, nothing to filter: keep the filter out of the chain.
		registration.setEnabled(!rules.isEmpty());
		return registration;
	}

}
