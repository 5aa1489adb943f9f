package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code concurrency} on filter rules, over HTTP, on Spring MVC (Tomcat) and WebFlux
 * (Netty), in memory and on Redis: never more requests of a key in the handler than the
 * permits, the rest answered 429 at once with the concurrent-requests policy; a permit
 * comes back when the response is complete (also when the handler fails, when a rate
 * limit of the same rule refuses, when the response was asynchronous or streamed, and
 * when the client goes away), and a key's permits are apart from another key's.
 */
class FilterRuleConcurrencyHttpTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	/** A bound for conditions, far above what they take on a busy machine. */
	private static final Duration BOUND = Duration.ofSeconds(60);

	static Stream<Arguments> stacksAndStores() {
		return Stream.of(Arguments.of(WebApplicationType.SERVLET, "memory"),
				Arguments.of(WebApplicationType.REACTIVE, "memory"), Arguments.of(WebApplicationType.SERVLET, "redis"),
				Arguments.of(WebApplicationType.REACTIVE, "redis"));
	}

	@ParameterizedTest
	@MethodSource("stacksAndStores")
	void neverMoreInFlightThanThePermitsAndEveryPermitComesBack(WebApplicationType stack, String store)
			throws Exception {
		try (Application app = Application.start(stack, store)) {
			Exports exports = app.context().getBean(Exports.class);
			// A burst of 6 from one client: 2 in the handler, 4 refused at once.
			List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				burst.add(app.getAsync("/exports/wait", "10.2.0.1"));
			}
			await("4 of 6 refused", () -> burst.stream().filter(CompletableFuture::isDone).count() == 4);
			await("2 of 6 in the handler", () -> exports.inHandler.get() == 2);
			assertThat(exports.inHandler.get())
				.as("in the handler; answered: %s",
						burst.stream()
							.filter(CompletableFuture::isDone)
							.map((call) -> call.join().statusCode() + " " + call.join().body())
							.toList())
				.isEqualTo(2);
			for (CompletableFuture<HttpResponse<String>> call : burst) {
				if (call.isDone()) {
					HttpResponse<String> refused = call.join();
					assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);
					assertThat(refused.headers().firstValue("RateLimit-Policy"))
						.hasValue("\"exports\";q=2;qu=\"concurrent-requests\"");
					assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"exports\";r=0");
					assertThat(refused.headers().firstValue("Retry-After")).isPresent();
					assertThat(refused.body()).contains("\"violated-policies\":[\"exports\"]")
						.contains("Concurrency limit 'exports' reached: 2 requests in flight; retry after about");
				}
			}
			// Another client's key has permits of its own.
			CompletableFuture<HttpResponse<String>> other = app.getAsync("/exports/wait", "10.2.0.2");
			await("the other client in the handler", () -> exports.inHandler.get() == 3);
			assertThat(app.holders("exports", "10.2.0.1")).isEqualTo(2);
			exports.gate.complete("exported");
			for (CompletableFuture<HttpResponse<String>> call : burst) {
				HttpResponse<String> response = call.get(BOUND.toSeconds(), TimeUnit.SECONDS);
				if (response.statusCode() == 200) {
					assertThat(response.body()).isEqualTo("exported");
					assertThat(response.headers().firstValue("RateLimit"))
						.hasValueSatisfying((value) -> assertThat(value).matches("\"exports\";r=[01]"));
				}
			}
			assertThat(other.get(BOUND.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(200);
			assertThat(exports.most.get()).isEqualTo(3);
			awaitReleased(app, "exports", "10.2.0.1");
			awaitReleased(app, "exports", "10.2.0.2");

			// A handler that fails gives its permit back.
			for (int i = 0; i < 3; i++) {
				assertThat(app.get("/exports/fail", "10.2.0.3").statusCode()).isEqualTo(500);
			}
			awaitReleased(app, "exports", "10.2.0.3");

			// Rate and concurrency on one rule: one in flight, 3 an hour. Each request
			// gives its permit back; the fourth is refused by the rate limit, and holds
			// nothing afterwards.
			for (int i = 0; i < 3; i++) {
				HttpResponse<String> quick = app.get("/reports/quick", "10.2.0.4");
				assertThat(quick.statusCode()).isEqualTo(200);
				assertThat(quick.headers().firstValue("RateLimit-Policy"))
					.hasValue("\"reports-concurrency\";q=1;qu=\"concurrent-requests\", \"reports\";q=3;w=3600");
				awaitReleased(app, "reports", "10.2.0.4");
			}
			HttpResponse<String> limited = app.get("/reports/quick", "10.2.0.4");
			assertThat(limited.statusCode()).isEqualTo(429);
			assertThat(limited.body()).contains("\"violated-policies\":[\"reports\"]");
			awaitReleased(app, "reports", "10.2.0.4");
			// Its concurrency refusal names the concurrency policy apart from the rate
			// limit's, although only one of them is in the response.
			exports.gate = new CompletableFuture<>();
			CompletableFuture<HttpResponse<String>> holding = app.getAsync("/reports/wait", "10.2.0.5");
			await("the report in the handler", () -> exports.inHandler.get() == 1);
			HttpResponse<String> busy = app.get("/reports/wait", "10.2.0.5");
			assertThat(busy.statusCode()).isEqualTo(429);
			assertThat(busy.headers().firstValue("RateLimit-Policy"))
				.hasValue("\"reports-concurrency\";q=1;qu=\"concurrent-requests\"");
			assertThat(busy.body()).contains("\"violated-policies\":[\"reports-concurrency\"]");
			exports.gate.complete("report");
			assertThat(holding.get(BOUND.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(200);
			awaitReleased(app, "reports", "10.2.0.5");

			if (stack == WebApplicationType.SERVLET) {
				streamedResponseHoldsItsPermitUntilItEnds(app, exports);
			}
			else {
				aClientThatGoesAwayGivesItsPermitBack(app, exports);
			}
		}
	}

	/**
	 * A streamed servlet response (asynchronous) holds its permit until its last byte.
	 */
	private void streamedResponseHoldsItsPermitUntilItEnds(Application app, Exports exports) throws Exception {
		exports.streamGate = new CompletableFuture<>();
		CompletableFuture<HttpResponse<String>> streamed = app.getAsync("/exports/stream", "10.2.0.5");
		await("the stream started", () -> exports.streaming.get() == 1);
		assertThat(app.holders("exports", "10.2.0.5")).isEqualTo(1);
		exports.streamGate.complete(null);
		assertThat(streamed.get(BOUND.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("part 1\npart 2\n");
		awaitReleased(app, "exports", "10.2.0.5");
	}

	/**
	 * A client that closes its connection while its request waits in a WebFlux handler
	 * cancels the exchange, which gives the permit back.
	 */
	private void aClientThatGoesAwayGivesItsPermitBack(Application app, Exports exports) throws IOException {
		exports.gate = new CompletableFuture<>();
		int before = exports.inHandler.get();
		try (Socket socket = new Socket("127.0.0.1", app.port())) {
			OutputStream out = socket.getOutputStream();
			out.write(("GET /exports/wait HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 10.2.0.6\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			await("the request in the handler", () -> exports.inHandler.get() == before + 1);
			assertThat(app.holders("exports", "10.2.0.6")).isEqualTo(1);
		}
		awaitReleased(app, "exports", "10.2.0.6");
	}

	private static void awaitReleased(Application app, String bucket, String key) {
		await(bucket + " permits of " + key + " released", () -> app.holders(bucket, key) == 0);
	}

	private static void await(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + BOUND.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as("waited %s for %s", BOUND, what).isLessThan(deadline);
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	/**
	 * A running application on a free port with two rules, both keyed by the client's
	 * address: {@code exports} (only a concurrency limit, 2 in flight, on
	 * {@code /exports/**}) and {@code reports} (3 an hour and 1 in flight, on
	 * {@code /reports/**}).
	 */
	record Application(ConfigurableApplicationContext context, int port) implements AutoCloseable {

		static Application start(WebApplicationType stack, String store) {
			List<String> all = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
					"--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1",
					"--ratelimit.key-prefix=concurrency-" + UUID.randomUUID(), "--ratelimit.store=" + store,
					"--ratelimit.filter.rules[0].bucket=exports", "--ratelimit.filter.rules[0].paths=/exports/**",
					"--ratelimit.filter.rules[0].key=#clientIp", "--ratelimit.filter.rules[0].concurrency=2",
					"--ratelimit.filter.rules[1].bucket=reports", "--ratelimit.filter.rules[1].paths=/reports/**",
					"--ratelimit.filter.rules[1].key=#clientIp", "--ratelimit.filter.rules[1].limit=3",
					"--ratelimit.filter.rules[1].window=1h", "--ratelimit.filter.rules[1].algorithm=sliding-log",
					"--ratelimit.filter.rules[1].concurrency=1", "--ratelimit.filter.rules[1].concurrency-lease=10s"));
			if (store.equals("redis")) {
				all.addAll(StatusEndpointHttpTests.redis(redis));
			}
			else {
				all.add("--spring.autoconfigure.exclude="
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration");
			}
			ConfigurableApplicationContext context = new SpringApplicationBuilder(ConcurrencyApplication.class)
				.web(stack)
				.run(all.toArray(String[]::new));
			return new Application(context,
					context.getEnvironment().getRequiredProperty("local.server.port", Integer.class));
		}

		HttpResponse<String> get(String path, String client) {
			return LocalHttp.send(request(path, client));
		}

		CompletableFuture<HttpResponse<String>> getAsync(String path, String client) {
			return HttpClient.newBuilder()
				.version(HttpClient.Version.HTTP_1_1)
				.build()
				.sendAsync(request(path, client), HttpResponse.BodyHandlers.ofString());
		}

		private HttpRequest request(String path, String client) {
			return LocalHttp.request(this.port, path).header("X-Forwarded-For", client).GET().build();
		}

		int holders(String bucket, String key) {
			ConcurrencyLimiter limiter = this.context.getBean(ConcurrencyLimiters.class).find(bucket);
			assertThat(limiter).as(bucket).isNotNull();
			return limiter.holders(key).count();
		}

		@Override
		public void close() {
			this.context.close();
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Exports.class)
	static class ConcurrencyApplication {

	}

	/**
	 * Handlers that both stacks serve: a {@code Mono} is asynchronous on Spring MVC too.
	 * Counts the requests in its handlers, and the most at once.
	 */
	@RestController
	static class Exports {

		final AtomicInteger inHandler = new AtomicInteger();

		final AtomicInteger most = new AtomicInteger();

		final AtomicInteger streaming = new AtomicInteger();

		volatile CompletableFuture<String> gate = new CompletableFuture<>();

		volatile CompletableFuture<Void> streamGate = new CompletableFuture<>();

		@GetMapping("/exports/wait")
		Mono<String> exportWhenTheGateOpens() {
			return Mono.defer(() -> {
				this.most.accumulateAndGet(this.inHandler.incrementAndGet(), Math::max);
				// Not cancelled with the request: other requests wait on the same gate.
				return Mono.fromFuture(this.gate, true);
			}).doFinally((signal) -> this.inHandler.decrementAndGet());
		}

		@GetMapping("/exports/fail")
		String fail() {
			throw new IllegalStateException("the export failed");
		}

		@GetMapping("/exports/stream")
		StreamingResponseBody stream() {
			return (out) -> {
				this.streaming.incrementAndGet();
				out.write("part 1\n".getBytes(StandardCharsets.UTF_8));
				out.flush();
				this.streamGate.join();
				out.write("part 2\n".getBytes(StandardCharsets.UTF_8));
			};
		}

		@GetMapping("/reports/wait")
		Mono<String> reportWhenTheGateOpens() {
			return exportWhenTheGateOpens();
		}

		@GetMapping("/reports/quick")
		String quick() {
			return "report";
		}

	}

}
