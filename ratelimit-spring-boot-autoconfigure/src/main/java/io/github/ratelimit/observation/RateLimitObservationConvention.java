package io.github.ratelimit.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The {@link ObservationConvention} of {@link RateLimitObservationDocumentation#DECISION
 * decision} observations; define a bean of this type to replace
 * {@link DefaultRateLimitObservationConvention}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface RateLimitObservationConvention extends ObservationConvention<RateLimitObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof RateLimitObservationContext;
	}

}
