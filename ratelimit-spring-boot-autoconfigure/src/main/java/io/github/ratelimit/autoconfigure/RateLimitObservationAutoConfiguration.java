package io.github.ratelimit.autoconfigure;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.acquire.DecisionTracer;
import io.github.ratelimit.observation.ObservationDecisionTracer;
import io.github.ratelimit.observation.RateLimitObservationConvention;
import io.github.ratelimit.observation.RateLimitWaitObservationConvention;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Micrometer observations of decisions ({@code ratelimit.decision},
 * {@code ratelimit.wait}), when the application has an {@link ObservationRegistry}:
 * Spring Boot's tracing makes spans of them, with the store's Redis command spans nested.
 * Off with {@code ratelimit.observations.enabled=false}. A
 * {@link RateLimitObservationConvention} or {@link RateLimitWaitObservationConvention}
 * bean replaces the default names and key values.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean({ ObservationRegistry.class, RateLimitStore.class })
@ConditionalOnBooleanProperty(name = "ratelimit.observations.enabled", matchIfMissing = true)
public final class RateLimitObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DecisionTracer rateLimitDecisionTracer(ObservationRegistry observationRegistry, RateLimitStore rateLimitStore,
			RateLimitProperties properties, ObjectProvider<RateLimitObservationConvention> convention,
			ObjectProvider<RateLimitWaitObservationConvention> waitConvention) {
		return new ObservationDecisionTracer(observationRegistry, rateLimitStore.name(), convention.getIfUnique(),
				waitConvention.getIfUnique(), properties.getObservations().isIncludeKey());
	}

}
