package io.github.ratelimit.autoconfigure;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.actuate.ConcurrencyEndpoint;
import io.github.ratelimit.actuate.ConcurrencyEndpointWebExtension;
import io.github.ratelimit.actuate.ConcurrencyStatistics;
import io.github.ratelimit.actuate.RateLimitStatistics;
import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.actuate.UnknownFieldsAdvisor;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.bucket.KeyStateReader;
import io.github.ratelimit.bucket.LiveLimits;
import io.github.ratelimit.status.StoreStatusSource;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The {@code ratelimits} actuator endpoint, when actuator is present and the application
 * exposes the endpoint ({@code management.endpoints.web.exposure.include}); read-only
 * unless {@code management.endpoint.ratelimits.access=unrestricted}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass(name = { "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
		"org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint" })
@ConditionalOnBean(Acquirer.class)
public final class RateLimitEndpointAutoConfiguration {

	/**
	 * Counts each bucket's outcomes for the endpoint. An observer: the acquirer is told
	 * of it when created, so it counts from the first decision.
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
	RateLimitStatistics rateLimitStatistics() {
		return new RateLimitStatistics();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
	RateLimitsEndpoint rateLimitsEndpoint(BucketRegistry registry, RateLimitStore rateLimitStore,
			KeyStateReader rateLimitKeyStateReader, RateLimitStatistics statistics, StoreStatusSource status,
			LiveLimits liveLimits) {
		return new RateLimitsEndpoint(registry, rateLimitStore, rateLimitKeyStateReader, statistics, status,
				liveLimits);
	}

	/**
	 * Refuses fields of a live change that the endpoint does not take (actuator would
	 * drop them without a word).
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
	UnknownFieldsAdvisor rateLimitsUnknownFieldsAdvisor() {
		return new UnknownFieldsAdvisor();
	}

	/**
	 * Counts each concurrency bucket's permits for the {@code concurrency} endpoint.
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(ConcurrencyEndpoint.class)
	ConcurrencyStatistics rateLimitConcurrencyStatistics() {
		return new ConcurrencyStatistics();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(ConcurrencyEndpoint.class)
	ConcurrencyEndpoint rateLimitConcurrencyEndpoint(ConcurrencyLimiters concurrencyLimiters,
			ConcurrencyStatistics statistics) {
		return new ConcurrencyEndpoint(concurrencyLimiters, statistics);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RateLimitsEndpoint.class)
	RateLimitsEndpointWebExtension rateLimitsEndpointWebExtension(RateLimitsEndpoint endpoint) {
		return new RateLimitsEndpointWebExtension(endpoint);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ConcurrencyEndpoint.class)
	ConcurrencyEndpointWebExtension rateLimitConcurrencyEndpointWebExtension(ConcurrencyEndpoint endpoint) {
		return new ConcurrencyEndpointWebExtension(endpoint);
	}

}
