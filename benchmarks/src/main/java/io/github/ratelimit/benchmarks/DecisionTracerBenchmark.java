package io.github.ratelimit.benchmarks;

import java.util.concurrent.TimeUnit;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.observation.ObservationDecisionTracer;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;

/**
 * What following decisions with Micrometer observations costs: one in-memory decision
 * through the {@link Acquirer} with no tracer (what an application without an
 * {@code ObservationRegistry} gets), with an {@link ObservationDecisionTracer} on
 * {@link ObservationRegistry#NOOP} (a registry that records nothing), and on a registry
 * with one handler that does nothing (the observation's own cost: context, key values,
 * scope; a real tracer or meter handler adds its own on top). Not run by run.sh: run it
 * with JMH's {@code Main} on {@code target/classes} and {@code target/classpath.txt}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DecisionTracerBenchmark {

	/** {@code none}, {@code noop-registry} or {@code one-handler}. */
	@Param({ "none", "noop-registry", "one-handler" })
	public String tracer = "none";

	private InMemoryRateLimitStore store = InMemoryRateLimitStore.create();

	private Acquirer acquirer = Acquirer.builder(this.store).build();

	private PermitRequest request = PermitRequest
		.of(Bucket.of("api", LimitSpec.of(1_000_000_000L, "1h", Algorithm.TOKEN_BUCKET)), "user-1", 1);

	@Setup(Level.Trial)
	public void setUp() {
		this.store = InMemoryRateLimitStore.create();
		Acquirer.Builder builder = Acquirer.builder(this.store);
		switch (this.tracer) {
			case "none" -> {
			}
			case "noop-registry" -> builder
				.tracer(new ObservationDecisionTracer(ObservationRegistry.NOOP, this.store.name(), null, null, false));
			case "one-handler" -> {
				ObservationRegistry registry = ObservationRegistry.create();
				registry.observationConfig().observationHandler(new NothingHandler());
				builder.tracer(new ObservationDecisionTracer(registry, this.store.name(), null, null, false));
			}
			default -> throw new IllegalArgumentException(
					"Unknown tracer '" + this.tracer + "': use none, noop-registry or one-handler");
		}
		this.acquirer = builder.build();
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.store.close();
	}

	@Benchmark
	public RateLimitResult tryAcquire() {
		return this.acquirer.tryAcquire(this.request);
	}

	/**
	 * Handles every observation and does nothing with it.
	 */
	static final class NothingHandler implements ObservationHandler<Observation.Context> {

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

}
