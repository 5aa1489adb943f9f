package io.github.ratelimit.gateway;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real gateway routes on Netty, limited by {@link BucketRateLimiter} through the
 * {@code RequestRateLimiter} filter with the application's key resolver, in front of a
 * local backend; in-memory store (no Redis in this gateway). The routes are in
 * {@code application-routes.yml}, the first one as the README shows it. No proxy is
 * trusted: the route keyed by {@link ClientIpKeyResolver} keys by the connection.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@ActiveProfiles("routes")
@ExtendWith(OutputCaptureExtension.class)
class GatewayRouteTests {

	private static final Backend backend = Backend.start();

	@LocalServerPort
	int port;

	@Autowired
	RequestRateLimiterGatewayFilterFactory requestRateLimiter;

	@Autowired
	BucketRateLimiter bucketRateLimiter;

	@Autowired
	BucketRegistry registry;

	@Autowired
	RateLimitStore store;

	@Autowired
	ConcurrencyLimiters concurrencyLimiters;

	@DynamicPropertySource
	static void backend(DynamicPropertyRegistry registry) {
		registry.add("backend.uri", backend::uri);
	}

	@AfterAll
	static void stopBackend() {
		backend.close();
	}

	@Test
	void theFilterUsesOurLimiterByDefault() {
		assertThat(this.requestRateLimiter.getDefaultRateLimiter()).isSameAs(this.bucketRateLimiter);
	}

	@Test
	void aRouteAnswers429WithOurHeadersOnceItsBucketIsSpent() throws Exception {
		int before = backend.requests();
		for (int i = 4; i >= 0; i--) {
			HttpResponse<String> allowed = get("/api/items", "alice");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(allowed.body()).isEqualTo("backend");
			assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=5;w=60");
			assertThat(allowed.headers().firstValue("RateLimit")).get().asString().startsWith("\"api\";r=" + i + ";t=");
			assertThat(allowed.headers().firstValue("Retry-After")).isEmpty();
		}
		HttpResponse<String> rejected = get("/api/items", "alice");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=5;w=60");
		assertThat(rejected.headers().firstValue("RateLimit")).get().asString().startsWith("\"api\";r=0;t=");
		assertThat(rejected.headers().firstValue("Retry-After")).get()
			.satisfies((seconds) -> assertThat(Long.parseLong(seconds)).isBetween(1L, 60L));
		assertThat(backend.requests()).isEqualTo(before + 5);
		// The key is the key resolver's: another user has a bucket of their own.
		assertThat(get("/api/items", "bob").statusCode()).isEqualTo(200);
	}

	@Test
	void aRouteWithSettleReservesItsCostAndSettlesWhatTheBackendSaysItUsed() throws Exception {
		assertThat(get("/tokens/complete?used=30", "carol").statusCode()).isEqualTo(200);
		assertThat(eventually(() -> remaining("tokens", "carol"), 970L)).as("30 used of 100 reserved").isEqualTo(970);
		assertThat(get("/tokens/complete?used=250", "carol").statusCode()).isEqualTo(200);
		assertThat(eventually(() -> remaining("tokens", "carol"), 720L)).as("250 used of 100 reserved").isEqualTo(720);
		assertThat(get("/tokens/complete", "carol").statusCode()).isEqualTo(200);
		assertThat(eventually(() -> remaining("tokens", "carol"), 620L)).as("no header: the reservation stands")
			.isEqualTo(620);
	}

	private long remaining(String bucket, String key) {
		BucketDefinition definition = this.registry.find(bucket);
		assertThat(definition).isNotNull();
		return this.store.peek(bucket, key, definition.limits()).remaining();
	}

	/**
	 * Reads {@code value} until it gives {@code expected} or 30 seconds have passed: a
	 * settlement is made once the response is complete, off the event loop.
	 */
	private static long eventually(LongSupplier value, long expected) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		long last = value.getAsLong();
		while (last != expected && System.nanoTime() < deadline) {
			Thread.sleep(10);
			last = value.getAsLong();
		}
		return last;
	}

	@Test
	void aRouteTakesItsCostPerRequest() throws Exception {
		assertThat(get("/reports/q1", "alice").headers().firstValue("RateLimit")).get()
			.asString()
			.startsWith("\"reports\";r=6;");
		assertThat(get("/reports/q1", "alice").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = get("/reports/q1", "alice");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("RateLimit")).get().asString().startsWith("\"reports\";r=2;");
	}

	@Test
	void aRouteWithoutABucketArgumentUsesTheBucketNamedLikeIt() throws Exception {
		HttpResponse<String> allowed = get("/orders/1", "alice");
		assertThat(allowed.statusCode()).isEqualTo(200);
		assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValue("\"orders\";q=1;w=3600");
		assertThat(get("/orders/1", "alice").statusCode()).isEqualTo(429);
	}

	@Test
	void aShadowBucketNeverRejectsNorAdvertises() throws Exception {
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> response = get("/trial/x", "alice");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit")).isEmpty();
		}
	}

	@Test
	void aRouteKeyedByClientIpIgnoresTheForwardedHeadersOfAClientThatIsNoTrustedProxy(CapturedOutput output)
			throws Exception {
		int admitted = 0;
		for (int i = 1; i <= 30; i++) {
			int status = Backend.getForwardedFor(this.port, "/per-client/x", "198.51.100." + i);
			assertThat(status).isIn(200, 429);
			admitted += (status == 200) ? 1 : 0;
		}
		assertThat(admitted).isEqualTo(10);
		assertThat(output).containsOnlyOnce("carries a X-Forwarded-For header, which was ignored for #clientIp");
	}

	@Test
	void aRouteWithConcurrencyNeverHasMoreInFlightPerKeyAndEveryPermitComesBack() throws Exception {
		List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			burst.add(Backend.getAsync(this.port, "/exports/report", "erin"));
		}
		assertThat(eventually(() -> burst.stream().filter(CompletableFuture::isDone).count(), 4L))
			.as("4 of 6 refused at once")
			.isEqualTo(4);
		for (CompletableFuture<HttpResponse<String>> call : burst) {
			if (call.isDone()) {
				HttpResponse<String> refused = call.join();
				assertThat(refused.statusCode()).isEqualTo(429);
				assertThat(refused.headers().firstValue("RateLimit-Policy"))
					.hasValue("\"exports\";q=2;qu=\"concurrent-requests\"");
				assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"exports\";r=0");
				assertThat(refused.headers().firstValue("Retry-After")).isPresent();
			}
		}
		CompletableFuture<HttpResponse<String>> other = Backend.getAsync(this.port, "/exports/report", "frank");
		assertThat(eventually(() -> backend.held(), 3L)).as("frank's request in the backend too").isEqualTo(3);
		assertThat(holders("exports", "erin")).isEqualTo(2);
		backend.openGate();
		for (CompletableFuture<HttpResponse<String>> call : burst) {
			assertThat(call.get(60, TimeUnit.SECONDS).statusCode()).isIn(200, 429);
		}
		assertThat(other.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		assertThat(backend.mostHeld()).isEqualTo(3);
		assertThat(eventually(() -> holders("exports", "erin"), 0L)).isZero();
		assertThat(eventually(() -> holders("exports", "frank"), 0L)).isZero();
		assertThat(this.registry.find("exports")).as("no rate limit").isNull();
	}

	@Test
	void aRouteWithRateAndConcurrencyGivesThePermitBackWhenTheRateLimitRefuses() throws Exception {
		for (int i = 0; i < 2; i++) {
			HttpResponse<String> allowed = get("/paced/1", "gina");
			assertThat(allowed.statusCode()).isEqualTo(200);
			assertThat(allowed.headers().firstValue("RateLimit-Policy"))
				.hasValue("\"paced-concurrency\";q=1;qu=\"concurrent-requests\", \"paced\";q=2;w=3600");
			assertThat(eventually(() -> holders("paced", "gina"), 0L)).isZero();
		}
		HttpResponse<String> refused = get("/paced/1", "gina");
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.headers().firstValue("RateLimit")).get().asString().contains("\"paced\";r=0;t=");
		assertThat(eventually(() -> holders("paced", "gina"), 0L)).isZero();
	}

	@Test
	void aRouteWithRateAndConcurrencyNamesItsConcurrencyPolicyApartWhenNoPermitIsFree() throws Exception {
		CompletableFuture<HttpResponse<String>> holding = Backend.getAsync(this.port, "/paced/hold", "hank");
		assertThat(eventually(() -> holders("paced", "hank"), 1L)).isEqualTo(1);
		HttpResponse<String> busy = get("/paced/1", "hank");
		assertThat(busy.statusCode()).isEqualTo(429);
		assertThat(busy.headers().firstValue("RateLimit-Policy"))
			.hasValue("\"paced-concurrency\";q=1;qu=\"concurrent-requests\"");
		assertThat(busy.headers().firstValue("RateLimit")).hasValue("\"paced-concurrency\";r=0");
		backend.letHeldGo();
		assertThat(holding.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		assertThat(eventually(() -> holders("paced", "hank"), 0L)).isZero();
	}

	private long holders(String bucket, String key) {
		ConcurrencyLimiter limiter = this.concurrencyLimiters.find(bucket);
		assertThat(limiter).as(bucket).isNotNull();
		return limiter.holders(key).count();
	}

	@Test
	void theClientIpKeyResolverIsNoDefaultKeyResolver() {
		assertThat(this.requestRateLimiter.getDefaultKeyResolver()).isNotInstanceOf(ClientIpKeyResolver.class);
	}

	private HttpResponse<String> get(String path, String user) throws Exception {
		return Backend.get(this.port, path, user);
	}

}
