package io.github.ratelimit.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The {@link ObservationConvention} of {@link RateLimitObservationDocumentation#WAIT
 * wait} observations; define a bean of this type to replace
 * {@link DefaultRateLimitWaitObservationConvention}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface RateLimitWaitObservationConvention extends ObservationConvention<RateLimitWaitObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof RateLimitWaitObservationContext;
	}

}
