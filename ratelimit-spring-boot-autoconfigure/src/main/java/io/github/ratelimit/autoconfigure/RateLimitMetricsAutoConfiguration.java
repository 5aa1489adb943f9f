package io.github.ratelimit.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.metrics.ConcurrencyMetrics;
import io.github.ratelimit.metrics.RateLimitMetrics;
import io.github.ratelimit.status.StoreStatusSource;

/**
 * Micrometer meters for rate limiting, when the application has a {@link MeterRegistry}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class, afterName = {
		"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, Acquirer.class })
public final class RateLimitMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitMetrics rateLimitMetrics(StoreStatusSource status, RateLimitProperties properties) {
		return new RateLimitMetrics(status, properties.getMetrics().getNearLimitShare());
	}

	@Bean
	@ConditionalOnMissingBean
	ConcurrencyMetrics rateLimitConcurrencyMetrics() {
		return new ConcurrencyMetrics();
	}

}
