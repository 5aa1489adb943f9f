package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.server.WebFilter;

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
import io.github.ratelimit.web.reactive.ExchangeVariables;
import io.github.ratelimit.web.reactive.RateLimitStatusWebFilter;
import io.github.ratelimit.web.reactive.RateLimitWebExceptionHandler;
import io.github.ratelimit.web.reactive.RateLimitWebFilter;
import io.github.ratelimit.web.reactive.ReactiveRateLimitResponses;

/**
 * Rate limiting for reactive (WebFlux) web applications: the web filter for
 * {@code ratelimit.filter.rules} (passing every request on when there are none), limit
 * headers on every response the filter limits, and 429 (or 503) responses for rejections
 * that reach the web handler, such as those of {@code @RateLimited} controller methods
 * returning {@code Mono} or {@code Flux}; and, when
 * {@code ratelimit.status-endpoint.enabled}, the status endpoint.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ WebFilter.class, reactor.core.publisher.Mono.class })
@ConditionalOnBean(Acquirer.class)
@Import(RateLimitHeadersConfiguration.class)
public final class RateLimitWebFluxAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ReactiveRateLimitResponses reactiveRateLimitResponses(RateLimitHeaders rateLimitHeaders) {
		return new ReactiveRateLimitResponses(rateLimitHeaders);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitWebExceptionHandler rateLimitWebExceptionHandler(ReactiveRateLimitResponses responses) {
		return new RateLimitWebExceptionHandler(responses);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ratelimit.filter.enabled", matchIfMissing = true)
	RateLimitWebFilter rateLimitWebFilter(RateLimitProperties properties, BucketRegistry registry,
			ConcurrencyLimiters concurrencyLimiters, RateLimitExpressions expressions, Acquirer rateLimitAcquirer,
			ReactiveRateLimitResponses responses, ClientIpResolver clientIps) {
		return new RateLimitWebFilter(
				FilterRulesFactory.create(properties, registry, concurrencyLimiters, expressions,
						new ExchangeVariables(clientIps)),
				rateLimitAcquirer, responses, properties.getFilter().getOrder());
	}

	/**
	 * The status endpoint: a web filter just before the rate limit filter, answering from
	 * the rules that filter enforces (none when it is off or was replaced by another
	 * bean).
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "ratelimit.status-endpoint.enabled")
	RateLimitStatusWebFilter rateLimitStatusWebFilter(RateLimitProperties properties,
			ObjectProvider<RateLimitWebFilter> rateLimitWebFilter, KeyStateReader rateLimitKeyStateReader) {
		RateLimitWebFilter rateLimit = rateLimitWebFilter.getIfUnique();
		List<FilterRule> rules = (rateLimit != null) ? rateLimit.getRules() : List.of();
		RateLimitStatus status = new RateLimitStatus(new FilterRules(rules, properties.getFilter().getMatch()),
				rateLimitKeyStateReader, properties.getFailureMode());
		return new RateLimitStatusWebFilter(status, properties.getStatusEndpoint().getPath(),
				properties.getFilter().getOrder() - 1);
	}

}
