package io.github.ratelimit.observation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.tracing.MicrometerTracing;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.redis.RedisRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;
import io.github.ratelimit.testsupport.tracing.SpanTree;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With tracing on the application's Lettuce client (as Spring Boot configures it when
 * tracing is present: {@link MicrometerTracing} in the client's resources), the Redis
 * store's own {@code EVALSHA} is a span nested under the decision's span, on a real
 * Redis, blocking and asynchronous alike.
 */
class RedisDecisionTracingTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private final SimpleTracer tracer = new SimpleTracer();

	private final ObservationRegistry registry = ObservationRegistry.create();

	private final Bucket login = Bucket.of("login", LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET));

	private ClientResources resources;

	private RedisClient client;

	private RedisRateLimitStore store;

	private Acquirer acquirer;

	@BeforeEach
	void traceTheClient() {
		this.registry.observationConfig().observationHandler(new DefaultTracingObservationHandler(this.tracer));
		this.resources = ClientResources.builder().tracing(new MicrometerTracing(this.registry, "Redis")).build();
		this.client = RedisClient.create(this.resources, RedisURI.create(redis.host(), redis.port()));
		this.store = RedisRateLimitStore.builder(this.client)
			.keyPrefix("tracing-" + System.nanoTime())
			.timeout(Duration.ofSeconds(5))
			.connectTimeout(Duration.ofSeconds(30))
			.build();
		this.store.start();
		this.acquirer = Acquirer.builder(this.store)
			.tracer(new ObservationDecisionTracer(this.registry, this.store.name(), null, null, false))
			.build();
	}

	@AfterEach
	void close() {
		this.store.close();
		this.client.shutdown();
		this.resources.shutdown();
	}

	@Test
	void theRedisCommandIsASpanUnderTheDecisionUnderTheRequest() {
		int before = this.tracer.getSpans().size();
		Observation.createNotStarted("http.server.requests", this.registry)
			.contextualName("http post /login")
			.observe(() -> this.acquirer.tryAcquire(PermitRequest.of(this.login, "alice", 1)));
		String tree = SpanTree.draw(spansSince(before));
		assertThat(tree).isEqualTo("""
				http post /login
				  ratelimit login [algorithm=token-bucket, bucket=login, degraded=false, outcome=allowed, store=redis]
				    evalsha
				""");
	}

	@Test
	void anAsynchronousDecisionHasItsRedisCommandNestedToo() {
		int before = this.tracer.getSpans().size();
		Observation.createNotStarted("http.server.requests", this.registry)
			.contextualName("http post /login")
			.observe(() -> this.acquirer.acquireAsync(List.of(PermitRequest.of(this.login, "bob", 1)))
				.toCompletableFuture()
				.join());
		String tree = SpanTree.draw(spansSince(before));
		assertThat(tree).isEqualTo("""
				http post /login
				  ratelimit login [algorithm=token-bucket, bucket=login, degraded=false, outcome=allowed, store=redis]
				    evalsha
				""");
	}

	/**
	 * Returns the spans ended since the first {@code index}: the store's startup (script
	 * load, warm-up calls) comes before.
	 */
	private List<SimpleSpan> spansSince(int index) {
		List<SimpleSpan> spans = new ArrayList<>(this.tracer.getSpans());
		return spans.subList(index, spans.size());
	}

}
