package io.github.ratelimit.observation;

import java.time.Duration;

import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;
import io.github.ratelimit.testsupport.tracing.SpanTree;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a WebFlux application served by Netty, on a real Redis, with a tracer behind Spring
 * Boot's observation registry: the decision of a filter rule and that of a
 * {@code @RateLimited} {@code Mono} are spans under the HTTP request's span, and the
 * store's {@code EVALSHA} (traced by Spring Boot's Lettuce instrumentation, on the
 * store's own connection) is under the decision's. Run with each of Reactor's context
 * propagation modes by its subclasses.
 * <p>
 * The heartbeat's interval is an hour: its script call, every 500ms by default, is a
 * trace of its own, which a test could otherwise catch between its request's spans.
 */
@SpringBootTest(classes = WebFluxDecisionTracingTests.TracedApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.store=redis",
				"ratelimit.redis.timeout=5s", "ratelimit.redis.heartbeat-interval=1h",
				"ratelimit.filter.rules[0].bucket=greeting", "ratelimit.filter.rules[0].paths=/api/greeting",
				"ratelimit.filter.rules[0].key=#clientIp", "ratelimit.filter.rules[0].limit=5",
				"ratelimit.filter.rules[0].window=1m", "ratelimit.filter.rules[0].algorithm=token-bucket" })
@AutoConfigureWebTestClient(timeout = "PT1M")
abstract class WebFluxDecisionTracingTests {

	private static final Duration SPANS_END_WITHIN = Duration.ofSeconds(30);

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	@Autowired
	private WebTestClient client;

	@Autowired
	private SimpleTracer tracer;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	@Test
	void aFilterRulesDecisionIsASpanUnderTheRequestWithTheRedisCommandUnderIt() {
		int mark = SpanTree.mark(this.tracer);
		this.client.get().uri("/api/greeting").exchange().expectStatus().isOk();
		assertThat(SpanTree.drawSince(this.tracer, mark, (span) -> "http get /api/greeting".equals(span.getName()),
				SPANS_END_WITHIN))
			.isEqualTo(
					"""
							http get /api/greeting
							  ratelimit greeting [algorithm=token-bucket, bucket=greeting, degraded=false, outcome=allowed, store=redis]
							    evalsha
							""");
	}

	@Test
	void anAnnotatedMonosDecisionIsASpanUnderTheRequestWithTheRedisCommandUnderIt() {
		int mark = SpanTree.mark(this.tracer);
		this.client.get().uri("/api/quote").exchange().expectStatus().isOk();
		assertThat(SpanTree.drawSince(this.tracer, mark, (span) -> "http get /api/quote".equals(span.getName()),
				SPANS_END_WITHIN))
			.isEqualTo(
					"""
							http get /api/quote
							  ratelimit quotes [algorithm=fixed-window, bucket=quotes, degraded=false, outcome=allowed, store=redis]
							    evalsha
							""");
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(TracedApplication.Controllers.class)
	static class TracedApplication {

		@Bean
		SimpleTracer simpleTracer() {
			return new SimpleTracer();
		}

		@Bean
		DefaultTracingObservationHandler tracingObservationHandler(SimpleTracer simpleTracer) {
			return new DefaultTracingObservationHandler(simpleTracer);
		}

		@RestController
		static class Controllers {

			@GetMapping("/api/greeting")
			Mono<String> greeting() {
				return Mono.just("hello");
			}

			@GetMapping("/api/quote")
			@RateLimited(bucket = "quotes", limit = 2, window = "1m", algorithm = Algorithm.FIXED_WINDOW)
			Mono<String> quote() {
				return Mono.just("quote");
			}

		}

	}

}
