package io.github.ratelimit.gateway;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;
import io.github.ratelimit.testsupport.threads.ThreadDumpOnFailure;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateways (two application contexts on their own ports) on one real Redis admit
 * exactly the limit between them, each answering the rest with 429 and our headers; hold
 * at most a route's {@code ratelimit.concurrency} in flight between them, counted by the
 * backend; with Redis down and {@code ratelimit.failure-mode=closed} they answer 503.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TwoGatewaysOneRedisTests {

	private static final int LIMIT = 20;

	private static final int REQUESTS = 60;

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final Backend backend = Backend.start();

	private static ConfigurableApplicationContext first;

	private static ConfigurableApplicationContext second;

	@AfterAll
	static void stopBackend() {
		backend.close();
	}

	@BeforeAll
	static void startGateways() {
		first = gateway();
		second = gateway();
	}

	@AfterAll
	static void stopGateways() {
		for (ConfigurableApplicationContext gateway : new ConfigurableApplicationContext[] { first, second }) {
			if (gateway != null) {
				gateway.close();
			}
		}
	}

	@Test
	@Order(1)
	void twoGatewaysOnOneRedisAdmitExactlyTheLimitBetweenThem() throws Exception {
		for (ConfigurableApplicationContext gateway : List.of(first, second)) {
			assertThat(gateway.getBean(RateLimitStore.class).name()).contains("redis");
			// Redis is here, so the gateway has its own limiter too; the filter uses
			// ours.
			assertThat(gateway.getBeansOfType(RedisRateLimiter.class)).hasSize(1);
			assertThat(gateway.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultRateLimiter())
				.isSameAs(gateway.getBean(BucketRateLimiter.class));
		}
		List<HttpResponse<String>> responses = sendConcurrently(new int[] { port(first), port(second) });
		List<HttpResponse<String>> admitted = responses.stream().filter((r) -> r.statusCode() == 200).toList();
		List<HttpResponse<String>> rejected = responses.stream().filter((r) -> r.statusCode() == 429).toList();
		assertThat(admitted.size() + rejected.size()).as("only 200 and 429").isEqualTo(REQUESTS);
		assertThat(admitted).as("admitted by two gateways sharing one Redis").hasSize(LIMIT);
		assertThat(backend.requests()).isEqualTo(LIMIT);
		assertThat(rejected).allSatisfy((response) -> {
			assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=" + LIMIT + ";w=3600");
			assertThat(response.headers().firstValue("RateLimit")).get().asString().startsWith("\"api\";r=0;t=");
			assertThat(response.headers().firstValue("Retry-After")).isPresent();
		});
		assertThat(redis.server().command("KEYS", "rl:{api:}*").split("\n")).as("one shared key in Redis").hasSize(1);
	}

	@Test
	@Order(2)
	void twoGatewaysOnOneRedisHoldAtMostTheRoutesConcurrencyBetweenThem() throws Exception {
		List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			burst.add(Backend.getAsync(port((i % 2 == 0) ? first : second), "/exports/report", "dana"));
		}
		await("3 in the backend and 9 refused",
				() -> backend.held() == 3 && burst.stream().filter(CompletableFuture::isDone).count() == 9);
		assertThat(redis.server().command("ZCARD", "rl:{exports:dana}:cc").trim()).isEqualTo("3");
		for (CompletableFuture<HttpResponse<String>> call : burst) {
			if (call.isDone()) {
				assertThat(call.join().statusCode()).isEqualTo(429);
				assertThat(call.join().headers().firstValue("RateLimit-Policy"))
					.hasValue("\"exports\";q=3;qu=\"concurrent-requests\"");
			}
		}
		backend.openGate();
		for (CompletableFuture<HttpResponse<String>> call : burst) {
			assertThat(call.get(60, TimeUnit.SECONDS).statusCode()).isIn(200, 429);
		}
		assertThat(backend.mostHeld()).as("in the backend at once, counted by it").isEqualTo(3);
		await("every permit back", () -> "0".equals(redis.server().command("ZCARD", "rl:{exports:dana}:cc").trim()));
	}

	@Test
	@Order(3)
	void withRedisDownAndFailureModeClosedRequestsAreServiceUnavailable() throws Exception {
		int before = backend.requests();
		redis.server().stop();
		try {
			HttpResponse<String> response = Backend.get(port(first), "/api/items", "carol");
			assertThat(response.statusCode()).isEqualTo(503);
			assertThat(response.headers().firstValue("RateLimit")).isEmpty();
			assertThat(backend.requests()).isEqualTo(before);
		}
		finally {
			redis.server().start();
		}
	}

	private List<HttpResponse<String>> sendConcurrently(int[] ports) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(8);
		try {
			List<Future<HttpResponse<String>>> futures = new ArrayList<>();
			for (int i = 0; i < REQUESTS; i++) {
				int port = ports[i % 2];
				futures.add(executor.submit(() -> Backend.get(port, "/api/items", "alice")));
			}
			List<HttpResponse<String>> responses = new ArrayList<>();
			for (int i = 0; i < futures.size(); i++) {
				try {
					responses.add(futures.get(i).get());
				}
				catch (ExecutionException ex) {
					throw new AssertionError(unanswered(i, ports[i % 2], responses), ex);
				}
			}
			return responses;
		}
		finally {
			executor.shutdownNow();
		}
	}

	/**
	 * Says which request went unanswered, what the others got, what reached the backend,
	 * and where every thread of the two gateways stood: a request that hung once (30 s,
	 * in a full build) left no other trace.
	 */
	private static String unanswered(int request, int port, List<HttpResponse<String>> answered) {
		return ThreadDumpOnFailure.threads(String.format(
				"Request %d of %d, to the gateway on port %d, got no answer; statuses before it: %s; "
						+ "requests that reached the backend: %d. Threads:",
				request + 1, REQUESTS, port, answered.stream().map(HttpResponse::statusCode).toList(),
				backend.requests()));
	}

	private static ConfigurableApplicationContext gateway() {
		String route = "spring.cloud.gateway.server.webflux.routes[0]";
		String exports = "spring.cloud.gateway.server.webflux.routes[1]";
		return new SpringApplicationBuilder(GatewayTestApplication.class, OwnReactorResources.class).run(
				"--server.port=0", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.store=redis",
				"--ratelimit.failure-mode=closed",
				// Redis shares two busy cores with the build: exactness is this test's
				// subject, not the timeout (a decision that timed out would be a 503).
				"--ratelimit.redis.timeout=2s", "--ratelimit.buckets.api.algorithm=sliding-log",
				"--ratelimit.buckets.api.limit=" + LIMIT, "--ratelimit.buckets.api.window=1h", "--" + route + ".id=api",
				"--" + route + ".uri=" + backend.uri(), "--" + route + ".predicates[0]=Path=/api/**",
				"--" + route + ".filters[0].name=RequestRateLimiter",
				"--" + route + ".filters[0].args.key-resolver=#{@userKeyResolver}",
				"--" + route + ".filters[0].args.ratelimit.bucket=api", "--" + exports + ".id=exports",
				"--" + exports + ".uri=" + backend.uri(), "--" + exports + ".predicates[0]=Path=/exports/**",
				"--" + exports + ".filters[0].name=RequestRateLimiter",
				"--" + exports + ".filters[0].args.key-resolver=#{@userKeyResolver}",
				"--" + exports + ".filters[0].args.ratelimit.concurrency=3");
	}

	private static void await(String what, BooleanSupplier condition) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("waited 60 s for %s", what).isNegative();
			Thread.sleep(5);
		}
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

}
