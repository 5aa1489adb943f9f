package io.github.ratelimit.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.health.RateLimitHealthIndicator;
import io.github.ratelimit.status.StoreStatusSource;

/**
 * The {@code ratelimit} health indicator, when Spring Boot's health support is present
 * ({@code spring-boot-starter-actuator});
 * {@code management.health.ratelimit.enabled=false} turns it off.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass(name = { "org.springframework.boot.health.contributor.HealthIndicator",
		"org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator" })
@ConditionalOnBean(StoreStatusSource.class)
public final class RateLimitHealthContributorAutoConfiguration {

	@Bean
	// On the method, not the class: the class conditions must rule out a class path
	// without Spring Boot's health module before this annotation is read.
	@ConditionalOnEnabledHealthIndicator("ratelimit")
	@ConditionalOnMissingBean(name = "ratelimitHealthIndicator")
	RateLimitHealthIndicator ratelimitHealthIndicator(StoreStatusSource status,
			ObjectProvider<EvictionPolicySource> evictionPolicy) {
		EvictionPolicySource policy = evictionPolicy.getIfUnique();
		return (policy != null) ? new RateLimitHealthIndicator(status, policy::policy)
				: new RateLimitHealthIndicator(status);
	}

}
