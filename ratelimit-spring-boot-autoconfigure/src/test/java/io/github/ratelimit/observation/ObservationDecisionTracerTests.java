package io.github.ratelimit.observation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.WaitPolicy;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.store.ForwardingRateLimitStore;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The observations an {@link Acquirer} makes through an
 * {@link ObservationDecisionTracer}: one {@code ratelimit.decision} per request with its
 * key values, current while the store decides (blocking and asynchronous), a
 * {@code ratelimit.wait} child per wait for a permit, and none at all on a registry that
 * records nothing.
 */
class ObservationDecisionTracerTests {

	private static final long START = 1_800_000_000_000_000L;

	private final Bucket login = Bucket.of("login", LimitSpec.of(1, "1m", Algorithm.SLIDING_LOG));

	private final ManualTimeSource time = new ManualTimeSource(START);

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	/** The contexts of the observations stopped, in order. */
	private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

	{
		this.registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStop(Observation.Context context) {
				ObservationDecisionTracerTests.this.stopped.add(context);
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
	}

	private final RecordingStore store = new RecordingStore(this.registry,
			InMemoryRateLimitStore.builder().timeSource(this.time).executor(Runnable::run).build());

	@Test
	void anAllowedRequestIsADecisionObservationWithLowCardinalityKeyValuesOnly() {
		acquirer(false).tryAcquire(PermitRequest.of(this.login, "alice", 1));
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 1)
			.hasObservationWithNameEqualTo("ratelimit.decision")
			.that()
			.hasContextualNameEqualTo("ratelimit login")
			.hasLowCardinalityKeyValue("bucket", "login")
			.hasLowCardinalityKeyValue("algorithm", "sliding-log")
			.hasLowCardinalityKeyValue("outcome", "allowed")
			.hasLowCardinalityKeyValue("store", "memory")
			.hasLowCardinalityKeyValue("degraded", "false")
			.doesNotHaveHighCardinalityKeyValueWithKey("key")
			.doesNotHaveError()
			.hasBeenStarted()
			.hasBeenStopped();
	}

	@Test
	void theKeyIsAHighCardinalityKeyValueOnlyWhenAskedFor() {
		acquirer(true).tryAcquire(PermitRequest.of(this.login, "alice", 1));
		assertThat(this.registry).hasObservationWithNameEqualTo("ratelimit.decision")
			.that()
			.hasHighCardinalityKeyValue("key", "alice")
			.doesNotHaveLowCardinalityKeyValueWithKey("key");
	}

	@Test
	void aRejectedRequestHasTheOutcomeRejectedAndAShadowOneShadowRejected() {
		Acquirer acquirer = acquirer(false);
		acquirer.tryAcquire(PermitRequest.of(this.login, "alice", 1));
		acquirer.tryAcquire(PermitRequest.of(this.login, "alice", 1));
		Bucket shadow = new Bucket("search", this.login.limits(), LimitMode.SHADOW);
		acquirer.tryAcquire(PermitRequest.of(shadow, "alice", 1));
		acquirer.tryAcquire(PermitRequest.of(shadow, "alice", 1));
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 4);
		assertThat(outcomes()).containsExactly("allowed", "rejected", "allowed", "shadow_rejected");
	}

	@Test
	void aRequestWhoseConcurrencyLimitHadNoPermitFreeInTheSameCallIsNotDecided() {
		InMemoryRateLimitStore both = InMemoryRateLimitStore.builder().timeSource(this.time).build();
		Acquirer acquirer = Acquirer.builder(both)
			.waiter(new ManualWaiter(this.time))
			.tracer(new ObservationDecisionTracer(this.registry, both.name(), null, null, false))
			.build();
		Bucket reports = Bucket.of("reports", LimitSpec.of(5, "1m", Algorithm.FIXED_WINDOW));
		try (LeaseRenewer renewer = new LeaseRenewer()) {
			ConcurrencyLimiter limiter = new ConcurrencyLimiter(both, "reports",
					new ConcurrencyLimit(1, Duration.ofSeconds(30)), renewer, List.of());
			Acquirer.Holding held = acquirer.acquireHolding(PermitRequest.of(reports, "alice", 1), limiter);
			Acquirer.Holding refused = acquirer.acquireHolding(PermitRequest.of(reports, "alice", 1), limiter);
			assertThat(refused.acquisition()).isNull();
			held.permit().release();
		}
		assertThat(outcomes()).containsExactly("allowed", "no_permit");
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("ratelimit.decision", 2);
	}

	@Test
	void aStoreFailureIsAnErrorOfADegradedDecision() {
		StoreUnavailableException failure = new StoreUnavailableException("Redis is down", null);
		this.store.failWith(failure);
		assertThatExceptionOfType(StoreUnavailableException.class)
			.isThrownBy(() -> acquirer(false).tryAcquire(PermitRequest.of(this.login, "alice", 1)));
		assertThat(this.registry).hasObservationWithNameEqualTo("ratelimit.decision")
			.that()
			.hasLowCardinalityKeyValue("outcome", "error")
			.hasLowCardinalityKeyValue("degraded", "true")
			.hasError(failure)
			.hasBeenStopped();
	}

	@Test
	void aDecisionOfTheFallbackIsDegraded() {
		this.store.mark(Decision.Origin.FALLBACK);
		acquirer(false).tryAcquire(PermitRequest.of(this.login, "alice", 1));
		assertThat(this.registry).hasObservationWithNameEqualTo("ratelimit.decision")
			.that()
			.hasLowCardinalityKeyValue("outcome", "allowed")
			.hasLowCardinalityKeyValue("degraded", "true");
	}

	@Test
	void severalAlgorithmsAreJoinedInTheOrderOfTheLimits() {
		Bucket api = Bucket.of("api", LimitSpec.of(10, "1s", Algorithm.TOKEN_BUCKET),
				LimitSpec.of(1000, "1h", Algorithm.FIXED_WINDOW), LimitSpec.of(20, "2s", Algorithm.TOKEN_BUCKET));
		acquirer(false).tryAcquire(PermitRequest.of(api, "alice", 1));
		assertThat(this.registry).hasObservationWithNameEqualTo("ratelimit.decision")
			.that()
			.hasLowCardinalityKeyValue("algorithm", "token-bucket+fixed-window");
	}

	@Test
	void theDecisionIsCurrentWhileTheStoreDecidesAndItsParentIsTheCallersObservation() {
		Observation caller = Observation.createNotStarted("caller", this.registry);
		caller.observe(() -> acquirer(false).tryAcquire(PermitRequest.of(this.login, "alice", 1)));
		Observation decision = this.store.currentWhileDeciding().get(0);
		assertThat(decision.getContext().getName()).isEqualTo("ratelimit.decision");
		assertThat(decision.getContext().getParentObservation()).isSameAs(caller);
		assertThat(this.registry.getCurrentObservation()).isNull();
	}

	@Test
	void aRequestThatWaitsForAPermitHasAWaitObservationUnderItsDecision() {
		ManualWaiter waiter = new ManualWaiter(this.time);
		Acquirer acquirer = acquirerOn(waiter, false);
		acquirer.tryAcquire(PermitRequest.of(this.login, "alice", 1));
		PermitRequest waiting = new PermitRequest(this.login, "alice", this.login.limits(), 1,
				WaitPolicy.waitUpTo(Duration.ofMinutes(2)));
		assertThat(acquirer.acquire(List.of(waiting)).granted()).isTrue();
		assertThat(waiter.sleeps()).hasSize(1);
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("ratelimit.wait", 1)
			.hasObservationWithNameEqualTo("ratelimit.wait")
			.that()
			.hasContextualNameEqualTo("ratelimit wait login")
			.hasLowCardinalityKeyValue("bucket", "login")
			.hasLowCardinalityKeyValue("algorithm", "sliding-log")
			.hasLowCardinalityKeyValue("store", "memory")
			.hasParentObservationContextMatching((parent) -> parent.getName().equals("ratelimit.decision"))
			.hasBeenStopped();
		assertThat(outcomes()).containsExactly("allowed", "waited");
		// Both calls of the waiting request ran under its one decision.
		List<Observation> deciding = this.store.currentWhileDeciding();
		assertThat(deciding.get(1)).isSameAs(deciding.get(2));
	}

	@Test
	void anAsynchronousDecisionIsCurrentWhileTheStoreIsCalledAndItsWaitEndsWithTheDelay() {
		ManualWaiter waiter = new ManualWaiter(this.time);
		Acquirer acquirer = acquirerOn(waiter, false);
		acquirer.tryAcquire(PermitRequest.of(this.login, "alice", 1));
		PermitRequest waiting = new PermitRequest(this.login, "alice", this.login.limits(), 1,
				WaitPolicy.waitUpTo(Duration.ofMinutes(2)));
		var acquired = acquirer.acquireAsync(List.of(waiting)).toCompletableFuture();
		assertThat(this.registry).hasObservationWithNameEqualTo("ratelimit.wait").that().isNotStopped();
		waiter.releaseNext();
		assertThat(acquired.join().granted()).isTrue();
		assertThat(this.registry).hasObservationWithNameEqualTo("ratelimit.wait").that().hasBeenStopped();
		assertThat(outcomes()).containsExactly("allowed", "waited");
		List<Observation> deciding = this.store.currentWhileDeciding();
		assertThat(deciding).hasSize(3).doesNotContainNull();
		assertThat(deciding.get(1)).isSameAs(deciding.get(2));
		assertThat(this.registry.getCurrentObservation()).isNull();
	}

	@Test
	void aRegistryThatRecordsNothingGetsNoObservation() {
		ObservationDecisionTracer noop = new ObservationDecisionTracer(ObservationRegistry.NOOP, "memory", null, null,
				false);
		assertThat(noop.start(PermitRequest.of(this.login, "alice", 1))).isNull();
		ObservationDecisionTracer withoutHandlers = new ObservationDecisionTracer(ObservationRegistry.create(),
				"memory", null, null, false);
		assertThat(withoutHandlers.start(PermitRequest.of(this.login, "alice", 1))).isNull();
		Acquirer acquirer = Acquirer.builder(this.store).tracer(noop).build();
		assertThat(acquirer.tryAcquire(PermitRequest.of(this.login, "alice", 1)).proceeds()).isTrue();
		assertThat(this.store.currentWhileDeciding()).containsOnlyNulls();
	}

	@Test
	void aConventionOfTheUsersReplacesTheDefault() {
		RateLimitObservationConvention custom = new DefaultRateLimitObservationConvention() {

			@Override
			public String getName() {
				return "limits.decided";
			}

		};
		Acquirer.builder(this.store)
			.tracer(new ObservationDecisionTracer(this.registry, "memory", custom, null, false))
			.build()
			.tryAcquire(PermitRequest.of(this.login, "alice", 1));
		assertThat(this.registry).hasObservationWithNameEqualTo("limits.decided")
			.that()
			.hasLowCardinalityKeyValue("bucket", "login");
	}

	private Acquirer acquirer(boolean includeKey) {
		return acquirerOn(new ManualWaiter(this.time), includeKey);
	}

	private Acquirer acquirerOn(ManualWaiter waiter, boolean includeKey) {
		return Acquirer.builder(this.store)
			.waiter(waiter)
			.tracer(new ObservationDecisionTracer(this.registry, this.store.name(), null, null, includeKey))
			.build();
	}

	private List<String> outcomes() {
		return this.stopped.stream()
			.filter((context) -> context.getName().equals("ratelimit.decision"))
			.map((context) -> Objects.requireNonNull(context.getLowCardinalityKeyValue("outcome")).getValue())
			.toList();
	}

	/**
	 * The in-memory store, noting which observation is current whenever it decides; it
	 * can fail, or mark its decisions as a fallback's.
	 */
	private static final class RecordingStore extends ForwardingRateLimitStore {

		private final ObservationRegistry registry;

		private final InMemoryRateLimitStore delegate;

		private final List<@Nullable Observation> current = new ArrayList<>();

		private @Nullable RuntimeException failure;

		private UnaryOperator<Decision> marking = UnaryOperator.identity();

		RecordingStore(ObservationRegistry registry, InMemoryRateLimitStore delegate) {
			super(delegate);
			this.registry = registry;
			this.delegate = delegate;
		}

		void failWith(RuntimeException failure) {
			this.failure = failure;
		}

		void mark(Decision.Origin origin) {
			this.marking = (decision) -> decision.withOrigin(origin);
		}

		synchronized List<@Nullable Observation> currentWhileDeciding() {
			return new ArrayList<>(this.current);
		}

		@Override
		public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
			synchronized (this) {
				this.current.add(this.registry.getCurrentObservation());
			}
			RuntimeException failure = this.failure;
			if (failure != null) {
				throw failure;
			}
			return this.marking.apply(this.delegate.decide(bucket, key, limits, cost, maxDelayMicros));
		}

	}

}
