package io.github.ratelimit.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.acquire.DecisionTracer;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;

/**
 * Follows decisions with Micrometer observations: a
 * {@link RateLimitObservationDocumentation#DECISION decision} per request, whose parent
 * is the observation current when the request is decided (the HTTP request's, a
 * caller's), current on the thread that calls the store, with a
 * {@link RateLimitObservationDocumentation#WAIT wait} child per wait for a permit.
 * <p>
 * While the registry is a no-op one (no handler registered), a request costs one check:
 * no context is made.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class ObservationDecisionTracer implements DecisionTracer {

	private final ObservationRegistry registry;

	private final String store;

	private final @Nullable RateLimitObservationConvention convention;

	private final RateLimitObservationConvention defaultConvention;

	private final @Nullable RateLimitWaitObservationConvention waitConvention;

	private final RateLimitWaitObservationConvention defaultWaitConvention;

	/**
	 * Creates a tracer.
	 * @param registry the registry
	 * @param store the store's name, for the {@code store} key value
	 * @param convention the user's decision convention, or {@code null} for the default
	 * @param waitConvention the user's wait convention, or {@code null} for the default
	 * @param includeKey whether the default conventions add the key as a high cardinality
	 * key value
	 */
	public ObservationDecisionTracer(ObservationRegistry registry, String store,
			@Nullable RateLimitObservationConvention convention,
			@Nullable RateLimitWaitObservationConvention waitConvention, boolean includeKey) {
		this.registry = registry;
		this.store = store;
		this.convention = convention;
		this.defaultConvention = new DefaultRateLimitObservationConvention(includeKey);
		this.waitConvention = waitConvention;
		this.defaultWaitConvention = new DefaultRateLimitWaitObservationConvention(includeKey);
	}

	@Override
	public @Nullable DecisionTrace start(PermitRequest request) {
		if (this.registry.isNoop()) {
			return null;
		}
		RateLimitObservationContext context = new RateLimitObservationContext(request, this.store);
		Observation observation = RateLimitObservationDocumentation.DECISION
			.observation(this.convention, this.defaultConvention, () -> context, this.registry)
			.start();
		// Left out by a predicate: nothing records it, nor its waits.
		return observation.isNoop() ? null : new Trace(observation, context);
	}

	/**
	 * One request's decision observation.
	 */
	private final class Trace implements DecisionTrace {

		private final Observation observation;

		private final RateLimitObservationContext context;

		Trace(Observation observation, RateLimitObservationContext context) {
			this.observation = observation;
			this.context = context;
		}

		@Override
		public Scope openScope() {
			return this.observation.openScope()::close;
		}

		@Override
		public Runnable startWait(long micros) {
			ObservationDecisionTracer tracer = ObservationDecisionTracer.this;
			RateLimitWaitObservationContext waiting = new RateLimitWaitObservationContext(this.context.getRequest(),
					tracer.store, micros);
			// The parent is the decision, whatever is current on the waiting thread.
			Observation wait = RateLimitObservationDocumentation.WAIT
				.observation(tracer.waitConvention, tracer.defaultWaitConvention, () -> waiting, tracer.registry)
				.parentObservation(this.observation)
				.start();
			return wait::stop;
		}

		@Override
		public void stop(RateLimitResult result) {
			this.context.setResult(result);
			this.observation.stop();
		}

		@Override
		public void discard() {
			this.context.setNoPermit();
			this.observation.stop();
		}

		@Override
		public void error(RuntimeException failure) {
			this.observation.error(failure);
			this.observation.stop();
		}

	}

}
