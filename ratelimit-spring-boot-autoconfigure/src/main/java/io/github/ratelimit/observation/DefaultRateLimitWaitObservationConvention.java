package io.github.ratelimit.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

import io.github.ratelimit.observation.RateLimitObservationDocumentation.KeyNames;
import io.github.ratelimit.observation.RateLimitObservationDocumentation.WaitKeyNames;

/**
 * The default {@link RateLimitWaitObservationConvention}: named {@code ratelimit.wait},
 * with the contextual name {@code ratelimit wait <bucket>} and the low cardinality key
 * values of {@link WaitKeyNames}; the key only when asked for.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class DefaultRateLimitWaitObservationConvention implements RateLimitWaitObservationConvention {

	/** The name of wait observations. */
	public static final String NAME = "ratelimit.wait";

	private final boolean includeKey;

	/**
	 * Creates the convention without the key.
	 */
	public DefaultRateLimitWaitObservationConvention() {
		this(false);
	}

	/**
	 * Creates the convention.
	 * @param includeKey whether the key is a high cardinality key value
	 */
	public DefaultRateLimitWaitObservationConvention(boolean includeKey) {
		this.includeKey = includeKey;
	}

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(RateLimitWaitObservationContext context) {
		return "ratelimit wait " + context.getRequest().bucket().name();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(RateLimitWaitObservationContext context) {
		return KeyValues.of(KeyValue.of(WaitKeyNames.BUCKET, context.getRequest().bucket().name()),
				KeyValue.of(WaitKeyNames.ALGORITHM,
						DefaultRateLimitObservationConvention.algorithm(context.getRequest().limits())),
				KeyValue.of(WaitKeyNames.STORE, context.getStore()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(RateLimitWaitObservationContext context) {
		return this.includeKey ? KeyValues.of(KeyValue.of(KeyNames.KEY, context.getRequest().key()))
				: KeyValues.empty();
	}

}
