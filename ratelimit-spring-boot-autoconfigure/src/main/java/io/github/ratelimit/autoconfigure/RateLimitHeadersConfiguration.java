package io.github.ratelimit.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.web.RateLimitHeaders;

/**
 * The limit headers of {@code ratelimit.headers}, shared by the servlet and the reactive
 * web configurations.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitHeadersConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitHeaders rateLimitHeaders(RateLimitProperties properties) {
		return new RateLimitHeaders(properties.getHeaders());
	}

}
