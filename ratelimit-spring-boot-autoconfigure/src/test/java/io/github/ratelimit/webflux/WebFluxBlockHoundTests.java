package io.github.ratelimit.webflux;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;
import io.github.ratelimit.testsupport.threads.ThreadDumpOnFailure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The WebFlux path on the Redis store never blocks a non-blocking thread (Netty's event
 * loops, Lettuce's I/O threads, Reactor's parallel scheduler): BlockHound is installed
 * before the application starts and records every blocking call such a thread makes,
 * while requests go through a filter rule, a leaky bucket rule that delays, and a
 * {@code @RateLimited} {@code Mono}, allowed and rejected, against a real Redis.
 * <p>
 * Runs in a JVM of its own (the {@code blockhound} Surefire execution), since BlockHound
 * instruments the JVM for good.
 */
@Tag("blockhound")
@SpringBootTest(classes = WebFluxBlockHoundTests.RedisWebFluxApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.store=redis",
				"ratelimit.redis.timeout=2s", "ratelimit.filter.rules[0].bucket=api",
				"ratelimit.filter.rules[0].paths=/api/greeting", "ratelimit.filter.rules[0].key=#clientIp",
				"ratelimit.filter.rules[0].limit=5", "ratelimit.filter.rules[0].window=1m",
				"ratelimit.filter.rules[1].bucket=smooth", "ratelimit.filter.rules[1].paths=/api/smooth",
				"ratelimit.filter.rules[1].algorithm=leaky-bucket", "ratelimit.filter.rules[1].limit=20",
				"ratelimit.filter.rules[1].window=1s", "ratelimit.filter.rules[1].burst=10",
				"ratelimit.filter.rules[2].bucket=hot", "ratelimit.filter.rules[2].paths=/api/hot",
				"ratelimit.filter.rules[2].limit=1000000", "ratelimit.filter.rules[2].window=1m",
				"ratelimit.filter.rules[3].bucket=keyed", "ratelimit.filter.rules[3].paths=/api/keyed",
				"ratelimit.filter.rules[3].key=#request.queryParams.getFirst('k')",
				"ratelimit.filter.rules[3].limit=1000000", "ratelimit.filter.rules[3].window=1m" })
@AutoConfigureWebTestClient(timeout = "PT1M")
class WebFluxBlockHoundTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	/** A request left unanswered (about one run in 20 on a busy machine) says where. */
	@RegisterExtension
	static final ThreadDumpOnFailure threadDump = new ThreadDumpOnFailure();

	private static final List<String> blockingCalls = new CopyOnWriteArrayList<>();

	@Autowired
	private WebTestClient client;

	@Autowired
	private Acquirer acquirer;

	@LocalServerPort
	private int port;

	@BeforeAll
	static void installBlockHound() {
		// Never skipped: outside its own JVM it fails and says how to run it, since
		// installing BlockHound into a shared JVM would instrument every later test.
		assertThat(System.getProperty("ratelimit-test.blockhound"))
			.as("WebFluxBlockHoundTests needs a JVM of its own, started with "
					+ "-XX:+AllowRedefinitionToAddDeleteMethods and -Dratelimit-test.blockhound=true: run it through "
					+ "Maven (mvn -pl ratelimit-spring-boot-autoconfigure test -Dtest=WebFluxBlockHoundTests), whose "
					+ "'blockhound' Surefire execution does both")
			.isEqualTo("true");
		// A decision answered on Lettuce's event loop is handed to the application's
		// task executor, a ThreadPoolExecutor, whose queue lock is held for an enqueue,
		// never across a wait; when a worker holds it, the event loop parks for a moment.
		// Reactor's integration allows the same for its own schedulers' queues. Flagged,
		// the callback would throw on the event loop and leave the request unanswered:
		// the likely cause of one timeout in about 20 runs. A leaky bucket's delay is
		// scheduled the same way on CompletableFuture's delayer, a
		// ScheduledThreadPoolExecutor whose queue lock its timer thread holds only
		// between waits: a clean-clone run parked Lettuce's event loop there once
		// (Unsafe#park, the request on /api/smooth unanswered).
		BlockHound.builder()
			.loadIntegrations()
			.allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute")
			.allowBlockingCallsInside("java.util.concurrent.ScheduledThreadPoolExecutor", "schedule")
			// Netty's buffer allocator takes a write lock for a moment when it adds
			// magazines, which event loops registering connections at once contend for.
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			// Lettuce's own writer lock, which every command dispatched on a connection
			// takes (Spring Data Redis's reactive commands too): threads dispatching at
			// once wait for each other there for a moment. Not the starter's to avoid.
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
			.blockingMethodCallback((method) -> {
				// The frames say which call blocked, should another one ever be flagged.
				StringBuilder call = new StringBuilder(method + " on " + Thread.currentThread().getName());
				StackTraceElement[] frames = new Throwable().getStackTrace();
				for (int i = 0; i < Math.min(frames.length, 25); i++) {
					call.append("\n\tat ").append(frames[i]);
				}
				blockingCalls.add(call.toString());
				throw new BlockingOperationError(method);
			})
			.install();
	}

	@BeforeEach
	void forgetEarlierCalls() {
		blockingCalls.clear();
	}

	@AfterEach
	void reportBlockingCalls() {
		// A blocking call BlockHound stops can leave a request without an answer: the
		// test then fails on a timeout, before its assertion could name the call.
		blockingCalls.forEach((call) -> System.out.println("[blockhound] blocking call: " + call));
	}

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	@Test
	void blockHoundCatchesABlockingCallOnANonBlockingThread() {
		// Without this, a test that never saw a blocking call could not tell a clean path
		// from a BlockHound that is not watching.
		assertThatThrownBy(() -> Mono.delay(Duration.ofMillis(1))
			.publishOn(Schedulers.parallel())
			.doOnNext((tick) -> sleep())
			.block(Duration.ofSeconds(10))).rootCause().isInstanceOf(BlockingOperationError.class);
		assertThat(blockingCalls).hasSize(1).allMatch((call) -> call.contains("sleep"));
	}

	@Test
	void filterRulesAndAnnotatedMonosOnRedisNeverBlock() {
		assertThat(this.acquirer.store().name()).contains("redis");
		for (int i = 0; i < 5; i++) {
			this.client.get().uri("/api/greeting").exchange().expectStatus().isOk().expectHeader().exists("RateLimit");
		}
		this.client.get().uri("/api/greeting").exchange().expectStatus().isEqualTo(429);
		for (int i = 0; i < 6; i++) {
			this.client.get().uri("/api/smooth").exchange().expectStatus().isOk();
		}
		this.client.get().uri("/api/quote").exchange().expectStatus().isOk();
		this.client.get().uri("/api/quote").exchange().expectStatus().isOk();
		this.client.get().uri("/api/quote").exchange().expectStatus().isEqualTo(429);
		assertThat(blockingCalls).isEmpty();
	}

	/**
	 * Many requests at once, on one hot key (coalesced into shared Redis calls) and on
	 * many keys: nothing the starter does on a Netty or Lettuce thread blocks. With each
	 * call's safety-net deadline on the JDK's timer, a Lettuce I/O thread parked on that
	 * timer's queue lock as it cancelled one, in 2 of 6 runs of this class.
	 */
	@Test
	void manyRequestsAtOnceNeverBlock() {
		// A connection per request (see LocalHttp): a pooled one now and then went
		// unanswered for good under a loaded build.
		WebClient web = WebClient.builder()
			.baseUrl("http://localhost:" + this.port)
			.clientConnector(new ReactorClientHttpConnector(reactor.netty.http.client.HttpClient.newConnection()))
			.build();
		for (int round = 0; round < 5; round++) {
			List<Integer> statuses = Flux.range(0, 64)
				.flatMap((i) -> web.get()
					.uri((i % 2 == 0) ? "/api/hot" : "/api/keyed?k=" + i)
					.exchangeToMono((response) -> Mono.just(response.statusCode().value())), 32)
				.collectList()
				.block(Duration.ofSeconds(30));
			assertThat(statuses).hasSize(64).containsOnly(200);
		}
		assertThat(blockingCalls).isEmpty();
	}

	private static void sleep() {
		try {
			Thread.sleep(1);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(RedisWebFluxApplication.Controllers.class)
	static class RedisWebFluxApplication {

		@RestController
		static class Controllers {

			@GetMapping("/api/greeting")
			Mono<String> greeting() {
				return Mono.just("hello");
			}

			@GetMapping({ "/api/hot", "/api/keyed" })
			Mono<String> busy() {
				return Mono.just("busy");
			}

			@GetMapping("/api/smooth")
			Mono<String> smooth() {
				return Mono.just("smooth");
			}

			@GetMapping("/api/quote")
			@RateLimited(bucket = "quotes", limit = 2, window = "1m", algorithm = Algorithm.FIXED_WINDOW)
			Mono<String> quote() {
				return Mono.just("quote");
			}

		}

	}

}
