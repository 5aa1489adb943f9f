package io.github.ratelimit.gateway.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.config.conditional.ConditionalOnEnabledFilter;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.web.reactive.DispatcherHandler;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.gateway.BucketRateLimiter;
import io.github.ratelimit.gateway.ClientIpKeyResolver;
import io.github.ratelimit.gateway.ResponseSettlementFilter;
import io.github.ratelimit.web.RateLimitHeaders;

/**
 * Spring Cloud Gateway: the {@link BucketRateLimiter} as the {@code RequestRateLimiter}
 * filter's default limiter. It is {@link Primary}: the gateway auto-configures its own
 * {@code redisRateLimiter} when Redis is present, and the filter takes the one primary
 * {@link RateLimiter}; routes can still pick the gateway's with {@code rate-limiter:
 * "#{@redisRateLimiter}"}. Also the {@link ClientIpKeyResolver} routes can key by, as
 * {@code key-resolver: "#{@clientIpKeyResolver}"}. Runs before the gateway's
 * auto-configuration, whose filter factory and default key resolver are conditional on a
 * {@link RateLimiter} bean. Backs off with {@code ratelimit.enabled=false}, without the
 * gateway, when the gateway is disabled, or when the {@code RequestRateLimiter} filter
 * is.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class, before = GatewayAutoConfiguration.class)
@ConditionalOnClass({ RateLimiter.class, DispatcherHandler.class })
@ConditionalOnBooleanProperty(name = "spring.cloud.gateway.server.webflux.enabled", matchIfMissing = true)
@ConditionalOnBean(Acquirer.class)
public final class RateLimitGatewayAutoConfiguration {

	@Bean
	@Primary
	@ConditionalOnMissingBean
	@ConditionalOnEnabledFilter(RequestRateLimiterGatewayFilterFactory.class)
	BucketRateLimiter bucketRateLimiter(BucketRegistry registry, Acquirer rateLimitAcquirer,
			ObjectProvider<RateLimitHeaders> headers, RateLimitProperties properties,
			ConfigurationService configurationService, RateLimitExpressions rateLimitExpressions,
			ObjectProvider<ConcurrencyLimiters> concurrencyLimiters) {
		// A web stack's auto-configuration may define the header writer; one per mode is
		// all it holds.
		return new BucketRateLimiter(registry, rateLimitAcquirer,
				headers.getIfAvailable(() -> new RateLimitHeaders(properties.getHeaders())), configurationService,
				rateLimitExpressions, concurrencyLimiters.getIfAvailable());
	}

	/**
	 * Settles routes with a {@code ratelimit.settle} argument from their responses.
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnEnabledFilter(RequestRateLimiterGatewayFilterFactory.class)
	ResponseSettlementFilter rateLimitResponseSettlementFilter(Acquirer rateLimitAcquirer) {
		return new ResponseSettlementFilter(rateLimitAcquirer);
	}

	/**
	 * Keys a route by the client's address, for routes that name it. Not a default
	 * candidate: the filter's default key resolver stays the gateway's own (or the
	 * application's {@code KeyResolver} bean), which finds this one neither in its way
	 * nor ambiguous.
	 */
	@Bean(defaultCandidate = false)
	@ConditionalOnMissingBean(name = "clientIpKeyResolver")
	@ConditionalOnEnabledFilter(RequestRateLimiterGatewayFilterFactory.class)
	ClientIpKeyResolver clientIpKeyResolver(ClientIpResolver clientIps) {
		return new ClientIpKeyResolver(clientIps);
	}

}
