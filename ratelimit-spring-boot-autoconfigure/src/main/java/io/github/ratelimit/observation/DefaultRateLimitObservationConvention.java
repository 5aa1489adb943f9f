package io.github.ratelimit.observation;

import java.util.List;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.observation.RateLimitObservationDocumentation.DecisionKeyNames;
import io.github.ratelimit.observation.RateLimitObservationDocumentation.KeyNames;

/**
 * The default {@link RateLimitObservationConvention}: named {@code ratelimit.decision},
 * with the contextual name {@code ratelimit <bucket>} and the low cardinality key values
 * of {@link DecisionKeyNames}. The key is a high cardinality key value only when asked
 * for: it is user data.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class DefaultRateLimitObservationConvention implements RateLimitObservationConvention {

	/** The name of decision observations. */
	public static final String NAME = "ratelimit.decision";

	/** The outcome before the request is decided. */
	private static final KeyValue OUTCOME_UNKNOWN = KeyValue.of(DecisionKeyNames.OUTCOME, "unknown");

	private static final KeyValue OUTCOME_ERROR = KeyValue.of(DecisionKeyNames.OUTCOME, "error");

	/** A request its concurrency limit refused in the same store call: not decided. */
	private static final KeyValue OUTCOME_NO_PERMIT = KeyValue.of(DecisionKeyNames.OUTCOME, "no_permit");

	private static final KeyValue DEGRADED = KeyValue.of(DecisionKeyNames.DEGRADED, "true");

	private static final KeyValue NOT_DEGRADED = KeyValue.of(DecisionKeyNames.DEGRADED, "false");

	private static final String[] ALGORITHMS = algorithmValues();

	private final boolean includeKey;

	/**
	 * Creates the convention without the key.
	 */
	public DefaultRateLimitObservationConvention() {
		this(false);
	}

	/**
	 * Creates the convention.
	 * @param includeKey whether the key is a high cardinality key value
	 */
	public DefaultRateLimitObservationConvention(boolean includeKey) {
		this.includeKey = includeKey;
	}

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(RateLimitObservationContext context) {
		return "ratelimit " + context.getRequest().bucket().name();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(RateLimitObservationContext context) {
		return KeyValues.of(KeyValue.of(DecisionKeyNames.BUCKET, context.getRequest().bucket().name()),
				KeyValue.of(DecisionKeyNames.ALGORITHM, algorithm(context.getRequest().limits())), outcome(context),
				KeyValue.of(DecisionKeyNames.STORE, context.getStore()), degraded(context));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(RateLimitObservationContext context) {
		return this.includeKey ? KeyValues.of(KeyValue.of(KeyNames.KEY, context.getRequest().key()))
				: KeyValues.empty();
	}

	private static KeyValue outcome(RateLimitObservationContext context) {
		RateLimitResult result = context.getResult();
		if (result != null) {
			return KeyValue.of(DecisionKeyNames.OUTCOME, result.outcome().tagValue());
		}
		if (context.isNoPermit()) {
			return OUTCOME_NO_PERMIT;
		}
		return (context.getError() != null) ? OUTCOME_ERROR : OUTCOME_UNKNOWN;
	}

	private static KeyValue degraded(RateLimitObservationContext context) {
		RateLimitResult result = context.getResult();
		if (result != null) {
			return (result.decision().origin() == Decision.Origin.FALLBACK) ? DEGRADED : NOT_DEGRADED;
		}
		return (context.getError() != null) ? DEGRADED : NOT_DEGRADED;
	}

	/**
	 * Returns the algorithm key value of a request's limits: the one algorithm, or the
	 * distinct ones joined with {@code +}.
	 * @param limits the limits
	 * @return the value, e.g. {@code token-bucket}
	 */
	static String algorithm(List<LimitSpec> limits) {
		Algorithm first = limits.get(0).algorithm();
		StringBuilder joined = null;
		for (int i = 1; i < limits.size(); i++) {
			Algorithm algorithm = limits.get(i).algorithm();
			if (algorithm == first || (joined != null && seen(limits, i, algorithm))) {
				continue;
			}
			if (joined == null) {
				joined = new StringBuilder(ALGORITHMS[first.ordinal()]);
			}
			joined.append('+').append(ALGORITHMS[algorithm.ordinal()]);
		}
		return (joined != null) ? joined.toString() : ALGORITHMS[first.ordinal()];
	}

	private static boolean seen(List<LimitSpec> limits, int before, Algorithm algorithm) {
		for (int i = 0; i < before; i++) {
			if (limits.get(i).algorithm() == algorithm) {
				return true;
			}
		}
		return false;
	}

	private static String[] algorithmValues() {
		Algorithm[] algorithms = Algorithm.values();
		String[] values = new String[algorithms.length];
		for (Algorithm algorithm : algorithms) {
			values[algorithm.ordinal()] = algorithm.propertyValue();
		}
		return values;
	}

}
