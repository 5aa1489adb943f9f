package io.github.ratelimit.web.reactive;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.server.WebHandler;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.clientip.AddressRange;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.MatchMode;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitProblem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link RateLimitWebFilter} through a {@link WebTestClient} bound to a web
 * handler, with an in-memory store on a manual clock and a waiter in virtual time: the
 * servlet filter's checks, on the reactive stack.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class RateLimitWebFilterTests {

	/** A whole number of minutes since the epoch, so fixed windows start here. */
	private static final long START_MICROS = 28_333_333L * 60_000_000L;

	private static final LimitSpec TEN_PER_MINUTE = LimitSpec.of(10, "1m", Algorithm.FIXED_WINDOW);

	private final ManualTimeSource time = new ManualTimeSource(START_MICROS);

	private final ManualWaiter waiter = new ManualWaiter(this.time);

	private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
		.timeSource(this.time)
		.executor(Runnable::run)
		.build();

	private final RateLimitExpressions expressions = new RateLimitExpressions(null);

	private final AtomicInteger handled = new AtomicInteger();

	/** Token bucket, 2 per minute: one permit comes back every 30 seconds. */
	private final Bucket api = bucket("api", LimitMode.ENFORCE, LimitSpec.of(2, "1m", Algorithm.TOKEN_BUCKET));

	@Test
	void aRuleWithSettleReservesItsCostAndSettlesWhatTheResponseSays() {
		Bucket tokens = bucket("tokens", LimitMode.ENFORCE, LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW));
		RateLimitWebFilter filter = filter(HeadersMode.DRAFT, MatchMode.FIRST,
				rule(0, tokens).cost("#request.queryParams.getFirst('max')")
					.settle("#status >= 500 ? 0 : #header('X-Tokens-Used')"));
		// The backend: says what it used in a header, or fails.
		WebHandler backend = (exchange) -> {
			if (exchange.getRequest().getQueryParams().containsKey("fail")) {
				return Mono.error(new IllegalStateException("backend down"));
			}
			String used = exchange.getRequest().getQueryParams().getFirst("used");
			if (used != null) {
				exchange.getResponse().getHeaders().set("X-Tokens-Used", used);
			}
			return exchange.getResponse()
				.writeWith(Mono.just(exchange.getResponse().bufferFactory().wrap("ok".getBytes())));
		};
		WebTestClient client = WebTestClient.bindToWebHandler(backend).webFilter(filter).build();
		client.get().uri("/a?max=50&used=20").exchange().expectStatus().isOk();
		assertThat(this.store.peek("tokens", "", tokens.limits()).remaining()).as("20 used of 50 reserved")
			.isEqualTo(80);
		client.get().uri("/a?max=10&used=30").exchange().expectStatus().isOk();
		assertThat(this.store.peek("tokens", "", tokens.limits()).remaining()).as("30 used of 10 reserved")
			.isEqualTo(50);
		client.get().uri("/a?max=10&fail").exchange().expectStatus().is5xxServerError();
		assertThat(this.store.peek("tokens", "", tokens.limits()).remaining())
			.as("a failed request gives its reservation back")
			.isEqualTo(50);
		client.get().uri("/a?max=10").exchange().expectStatus().isOk();
		assertThat(this.store.peek("tokens", "", tokens.limits()).remaining()).as("no header: the reservation stands")
			.isEqualTo(40);
	}

	@Test
	void allowedResponseShouldCarryDraftHeaders() {
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST, rule(0, this.api).paths(List.of("/api/**")));
		client.get()
			.uri("/api/items")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals(RateLimitHeaders.POLICY, "\"api\";q=2;w=60")
			.expectHeader()
			.valueEquals(RateLimitHeaders.RATE_LIMIT, "\"api\";r=1;t=30")
			.expectHeader()
			.doesNotExist(RateLimitHeaders.LEGACY_LIMIT);
		client.get()
			.uri("/api/items")
			.exchange()
			.expectHeader()
			.valueEquals(RateLimitHeaders.RATE_LIMIT, "\"api\";r=0;t=60");
	}

	@Test
	void limitReachedShouldRespondWith429ProblemAndNotCallTheChain() {
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST,
				rule(0, this.api).key("#clientIp").paths(List.of("/api/**")));
		from(client, "10.0.0.7", "/api/items").expectStatus().isOk();
		from(client, "10.0.0.7", "/api/items").expectStatus().isOk();
		QuotaExceededResponse.expect(from(client, "10.0.0.7", "/api/items"), "api", 30, "\"api\";q=2;w=60",
				"\"api\";r=0;t=60", "/api/items");
		assertThat(this.handled).hasValue(2);
	}

	@Test
	void requestShouldBeAllowedAgainAfterRetryAfter() {
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST, rule(0, this.api));
		client.get().uri("/a").exchange().expectStatus().isOk();
		client.get().uri("/a").exchange().expectStatus().isOk();
		client.get().uri("/a").exchange().expectStatus().isEqualTo(429).expectHeader().valueEquals("Retry-After", "30");
		this.time.advance(Duration.ofSeconds(30).minusMillis(1));
		client.get().uri("/a").exchange().expectStatus().isEqualTo(429).expectHeader().valueEquals("Retry-After", "1");
		this.time.advance(Duration.ofMillis(1));
		client.get().uri("/a").exchange().expectStatus().isOk();
	}

	@Test
	void clientIpShouldLimitEachClientSeparatelyWithoutThePort() {
		Bucket tiny = bucket("tiny", LimitMode.ENFORCE, LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST, rule(0, tiny).key("#clientIp"));
		from(client, "10.0.0.1", "/a").expectStatus().isOk();
		from(client, "10.0.0.2", "/a").expectStatus().isOk();
		from(client, "10.0.0.1", "/a").expectStatus().isEqualTo(429);
		assertThat(this.store.peek("tiny", "10.0.0.1", tiny.limits()).remaining()).isZero();
	}

	@Test
	void forgedForwardedHeadersShouldShareTheKeyOfTheConnection() {
		WebTestClient client = client(ClientIpResolver.trustingNothing());
		int admitted = 0;
		for (int i = 1; i <= 30; i++) {
			admitted += admitted(client.get()
				.uri("/a")
				.header(RemoteAddressFromHeader.HEADER, "203.0.113.9")
				.header("X-Forwarded-For", "198.51.100." + i)
				.header("Forwarded", "for=198.51.101." + i)
				.header("X-Real-IP", "198.51.102." + i));
		}
		assertThat(admitted).isEqualTo(10);
	}

	@Test
	void aTrustedProxyShouldGiveEachClientItsOwnKey() {
		WebTestClient client = client(new ClientIpResolver(List.of(AddressRange.parse("10.0.0.0/8")), 0, "Forwarded"));
		int clients = 0;
		int oneClient = 0;
		for (int i = 1; i <= 30; i++) {
			clients += admitted(client.get()
				.uri("/a")
				.header(RemoteAddressFromHeader.HEADER, "10.0.0.1")
				.header("Forwarded", "for=\"[2001:db8::" + i + "]:4711\""));
			oneClient += admitted(client.get()
				.uri("/a")
				.header(RemoteAddressFromHeader.HEADER, "::ffff:10.0.0.1")
				.header("Forwarded", "for=192.0.2." + i + ", for=198.51.100.7;proto=https"));
		}
		assertThat(clients).as("30 clients, one request each").isEqualTo(30);
		assertThat(oneClient).as("one client, 30 requests").isEqualTo(10);
		assertThat(this.store.peek("ten", "198.51.100.7", List.of(TEN_PER_MINUTE)).remaining()).isZero();
	}

	@Test
	void expressionsShouldSeeTheRequestAndTheExchange() {
		Bucket tiny = bucket("tiny", LimitMode.ENFORCE, LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.ALL,
				rule(0, tiny).key("#request.headers.getFirst('X-Api-Key')"),
				rule(1, bucket("by-path", LimitMode.ENFORCE, LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW)))
					.key("#exchange.request.path.value()"));
		client.get().uri("/a").header("X-Api-Key", "k1").exchange().expectStatus().isOk();
		client.get().uri("/b").header("X-Api-Key", "k2").exchange().expectStatus().isOk();
		client.get()
			.uri("/c")
			.header("X-Api-Key", "k1")
			.exchange()
			.expectStatus()
			.isEqualTo(429)
			.expectBody()
			.jsonPath("$.violated-policies[0]")
			.isEqualTo("tiny");
		client.get()
			.uri("/a")
			.header("X-Api-Key", "k3")
			.exchange()
			.expectStatus()
			.isEqualTo(429)
			.expectBody()
			.jsonPath("$.violated-policies[0]")
			.isEqualTo("by-path");
	}

	@Test
	void aServletPropertyOfTheRequestShouldFailTheRuleWithTheReactiveWay() {
		assertThatIllegalStateException()
			.isThrownBy(() -> rule(0, this.api).key("#request.remoteAddr")
				.build(this.expressions, new ExchangeVariables(ClientIpResolver.trustingNothing())))
			.withMessageContaining("ratelimit.filter.rules[0].key")
			.withMessageContaining("#request.remoteAddr")
			.withMessageContaining("ServerHttpRequest")
			.withMessageContaining("#clientIp");
	}

	@Test
	void ruleShouldMatchThePathWithoutTheContextPath() {
		Bucket tiny = bucket("tiny", LimitMode.ENFORCE, LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		RateLimitWebFilter filter = filter(HeadersMode.DRAFT, MatchMode.FIRST, rule(0, tiny).paths(List.of("/api/**")));
		WebFilter contextPath = (exchange, chain) -> chain
			.filter(exchange.mutate().request(exchange.getRequest().mutate().contextPath("/app").build()).build());
		WebTestClient client = WebTestClient.bindToWebHandler(handler()).webFilter(contextPath, filter).build();
		client.get().uri("/app/api/items").exchange().expectStatus().isOk();
		client.get()
			.uri("/app/api/items")
			.exchange()
			.expectStatus()
			.isEqualTo(429)
			.expectBody()
			.jsonPath("$.instance")
			.isEqualTo("/app/api/items");
	}

	@Test
	void getRuleShouldAlsoLimitHead() {
		Bucket tiny = bucket("tiny", LimitMode.ENFORCE, LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST, rule(0, tiny).methods(List.of("GET")));
		client.get().uri("/page").exchange().expectStatus().isOk();
		client.post().uri("/page").exchange().expectStatus().isOk();
		client.head().uri("/page").exchange().expectStatus().isEqualTo(429);
	}

	@Test
	void allMatchShouldGiveBackPermitsOfEarlierRulesWhenALaterRuleRejects() {
		Bucket site = bucket("site", LimitMode.ENFORCE, LimitSpec.of(10, "1m", Algorithm.TOKEN_BUCKET));
		Bucket perClient = bucket("per-client", LimitMode.ENFORCE, LimitSpec.of(1, "1m", Algorithm.SLIDING_LOG));
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.ALL, rule(0, site),
				rule(1, perClient).key("#clientIp"));
		from(client, "10.0.0.1", "/a").expectStatus().isOk();
		for (int i = 0; i < 3; i++) {
			from(client, "10.0.0.1", "/a").expectStatus()
				.isEqualTo(429)
				.expectBody()
				.jsonPath("$.violated-policies[0]")
				.isEqualTo("per-client");
		}
		assertThat(this.store.peek("site", "", site.limits()).remaining()).isEqualTo(9);
		assertThat(this.handled).hasValue(1);
	}

	@Test
	void nullKeyWithErrorPolicyShouldRespondWith400() {
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST,
				rule(0, this.api).key("#request.headers.getFirst('X-Api-Key')"));
		client.get()
			.uri("/a")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectHeader()
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.expectHeader()
			.doesNotExist(RateLimitHeaders.RATE_LIMIT)
			.expectBody()
			.jsonPath("$.status")
			.isEqualTo(400);
		assertThat(this.handled).hasValue(0);
	}

	@Test
	void nullKeyWithSkipPolicyShouldLetTheRequestThroughUnlimited() {
		Bucket tiny = bucket("tiny", LimitMode.ENFORCE, LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST,
				rule(0, tiny).key("#request.headers.getFirst('X-Api-Key')").nullKeyPolicy(NullKeyPolicy.SKIP));
		for (int i = 0; i < 3; i++) {
			client.get().uri("/a").exchange().expectStatus().isOk().expectHeader().doesNotExist("RateLimit");
		}
		client.get().uri("/a").header("X-Api-Key", "k1").exchange().expectStatus().isOk();
		client.get().uri("/a").header("X-Api-Key", "k1").exchange().expectStatus().isEqualTo(429);
	}

	@Test
	void costAboveCapacityShouldBeRejectedWithoutRetryAfter() {
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST,
				rule(0, this.api).cost("#request.queryParams.getFirst('n')"));
		client.get()
			.uri("/a?n=3")
			.exchange()
			.expectStatus()
			.isEqualTo(429)
			.expectHeader()
			.doesNotExist("Retry-After")
			.expectBody()
			.jsonPath("$.violated-policies[0]")
			.isEqualTo("api");
	}

	@Test
	void legacyAndNoneHeaderModesShouldApply() {
		WebTestClient legacy = client(HeadersMode.LEGACY, MatchMode.FIRST, rule(0, this.api));
		legacy.get()
			.uri("/a")
			.exchange()
			.expectHeader()
			.valueEquals(RateLimitHeaders.LEGACY_LIMIT, "2")
			.expectHeader()
			.valueEquals(RateLimitHeaders.LEGACY_REMAINING, "1")
			.expectHeader()
			.valueEquals(RateLimitHeaders.LEGACY_RESET, "30")
			.expectHeader()
			.doesNotExist(RateLimitHeaders.RATE_LIMIT);
		WebTestClient none = client(HeadersMode.NONE, MatchMode.FIRST,
				rule(0, bucket("other", LimitMode.ENFORCE, LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW))));
		none.get().uri("/a").exchange().expectStatus().isOk().expectHeader().doesNotExist(RateLimitHeaders.RATE_LIMIT);
		none.get()
			.uri("/a")
			.exchange()
			.expectStatus()
			.isEqualTo(429)
			.expectHeader()
			.valueEquals("Retry-After", "60")
			.expectHeader()
			.doesNotExist(RateLimitHeaders.RATE_LIMIT)
			.expectHeader()
			.doesNotExist(RateLimitHeaders.LEGACY_REMAINING);
	}

	@Test
	void shadowBucketShouldLetEveryRequestThroughWithoutHeaders() {
		Bucket trial = bucket("trial", LimitMode.SHADOW, LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST, rule(0, trial));
		for (int i = 0; i < 3; i++) {
			client.get().uri("/a").exchange().expectStatus().isOk().expectHeader().doesNotExist("RateLimit");
		}
		assertThat(this.handled).hasValue(3);
	}

	@Test
	void leakyBucketShouldHoldTheRequestUntilItsSlotWithoutBlocking() throws InterruptedException {
		// One slot every 100ms; the clock stands still between the requests, so the
		// second request is told to wait exactly one interval. The wait is a pending
		// delay: the request is not handled until the delay is released.
		Bucket smooth = bucket("smooth", LimitMode.ENFORCE, LimitSpec.of(5, "500ms", Algorithm.LEAKY_BUCKET));
		RateLimitWebFilter filter = filter(HeadersMode.DRAFT, MatchMode.FIRST, rule(0, smooth));
		WebTestClient client = WebTestClient.bindToWebHandler(handler()).webFilter(filter).build();
		client.get().uri("/a").exchange().expectStatus().isOk();
		assertThat(this.waiter.delays()).isEmpty();
		CompletableFuture<Integer> second = CompletableFuture.supplyAsync(() -> {
			client.get().uri("/a").exchange().expectStatus().isOk();
			return this.handled.get();
		});
		awaitPendingDelay();
		assertThat(this.waiter.pendingDelays()).containsExactly(100_000L);
		assertThat(this.handled).as("held back by its delay").hasValue(1);
		this.waiter.releaseNext();
		assertThat(second).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(2);
		assertThat(this.waiter.sleeps()).as("no thread slept").isEmpty();
	}

	@Test
	void unavailableStoreShouldRespondWith503() {
		Acquirer failing = Acquirer.builder(new UnavailableStore()).waiter(this.waiter).build();
		FilterRules rules = new FilterRules(List
			.of(rule(0, this.api).build(this.expressions, new ExchangeVariables(ClientIpResolver.trustingNothing()))),
				MatchMode.FIRST);
		RateLimitWebFilter filter = new RateLimitWebFilter(rules, failing,
				new ReactiveRateLimitResponses(new RateLimitHeaders(HeadersMode.DRAFT)), 0);
		WebTestClient.bindToWebHandler(handler())
			.webFilter(filter)
			.build()
			.get()
			.uri("/a")
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectHeader()
			.valueEquals("Retry-After", "1")
			.expectBody()
			.jsonPath("$.status")
			.isEqualTo(503);
		assertThat(this.handled).hasValue(0);
	}

	@Test
	void withoutRulesEveryRequestPassesUntouched() {
		WebTestClient client = client(HeadersMode.DRAFT, MatchMode.FIRST);
		for (int i = 0; i < 3; i++) {
			client.get().uri("/a").exchange().expectStatus().isOk().expectHeader().doesNotExist("RateLimit");
		}
	}

	private void awaitPendingDelay() throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (this.waiter.pendingDelays().isEmpty()) {
			assertThat(System.nanoTime()).as("a delay is asked for within 10s").isLessThan(deadline);
			Thread.sleep(5);
		}
	}

	private static Bucket bucket(String name, LimitMode mode, LimitSpec... limits) {
		return new Bucket(name, Arrays.asList(limits), mode);
	}

	private FilterRule.Builder rule(int index, Bucket bucket) {
		return FilterRule.builder("ratelimit.filter.rules[" + index + "]", bucket);
	}

	private RateLimitWebFilter filter(HeadersMode mode, MatchMode match, FilterRule.Builder... rules) {
		List<FilterRule> built = Arrays.stream(rules)
			.map((rule) -> rule.build(this.expressions, new ExchangeVariables(ClientIpResolver.trustingNothing())))
			.toList();
		Acquirer acquirer = Acquirer.builder(this.store).waiter(this.waiter).build();
		return new RateLimitWebFilter(new FilterRules(built, match), acquirer,
				new ReactiveRateLimitResponses(new RateLimitHeaders(mode)), -110);
	}

	private WebTestClient client(ClientIpResolver clientIps) {
		Bucket ten = bucket("ten", LimitMode.ENFORCE, TEN_PER_MINUTE);
		FilterRule rule = rule(0, ten).key("#clientIp").build(this.expressions, new ExchangeVariables(clientIps));
		RateLimitWebFilter filter = new RateLimitWebFilter(new FilterRules(List.of(rule), MatchMode.FIRST),
				Acquirer.builder(this.store).waiter(this.waiter).build(),
				new ReactiveRateLimitResponses(new RateLimitHeaders(HeadersMode.DRAFT)), -110);
		return WebTestClient.bindToWebHandler(handler()).webFilter(new RemoteAddressFromHeader(), filter).build();
	}

	private static int admitted(WebTestClient.RequestHeadersSpec<?> request) {
		int status = request.exchange().returnResult(byte[].class).getStatus().value();
		assertThat(status).isIn(200, 429);
		return (status == 200) ? 1 : 0;
	}

	private WebTestClient client(HeadersMode mode, MatchMode match, FilterRule.Builder... rules) {
		return WebTestClient.bindToWebHandler(handler())
			.webFilter(new RemoteAddressFromHeader(), filter(mode, match, rules))
			.build();
	}

	private static WebTestClient.ResponseSpec from(WebTestClient client, String address, String path) {
		return client.get().uri(path).header(RemoteAddressFromHeader.HEADER, address).exchange();
	}

	private WebHandler handler() {
		return (exchange) -> {
			this.handled.incrementAndGet();
			return exchange.getResponse()
				.writeWith(Mono.fromSupplier(() -> exchange.getResponse().bufferFactory().wrap("ok".getBytes())));
		};
	}

	/**
	 * Gives the request the client address of a test header, as a server would from its
	 * connection (the mock server has none).
	 */
	private static final class RemoteAddressFromHeader implements WebFilter {

		static final String HEADER = "X-Test-Remote-Address";

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
			String address = exchange.getRequest().getHeaders().getFirst(HEADER);
			if (address == null) {
				return chain.filter(exchange);
			}
			ServerHttpRequest request = new ServerHttpRequestDecorator(exchange.getRequest()) {
				@Override
				public InetSocketAddress getRemoteAddress() {
					return new InetSocketAddress(address, 50_000 + (int) (Math.random() * 10_000));
				}
			};
			return chain.filter(exchange.mutate().request(request).build());
		}

	}

	/**
	 * A store that cannot decide, as a Redis store does when Redis is down and
	 * {@code ratelimit.failure-mode} is {@code closed}.
	 */
	private static final class UnavailableStore implements RateLimitStore {

		@Override
		public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
			throw new StoreUnavailableException("Redis is down", null);
		}

		@Override
		public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
			throw new StoreUnavailableException("Redis is down", null);
		}

		@Override
		public Decision peek(String bucket, String key, List<LimitSpec> limits) {
			throw new StoreUnavailableException("Redis is down", null);
		}

		@Override
		public void reset(String bucket, String key, List<LimitSpec> limits) {
			throw new StoreUnavailableException("Redis is down", null);
		}

		@Override
		public String name() {
			return "unavailable";
		}

	}

}
