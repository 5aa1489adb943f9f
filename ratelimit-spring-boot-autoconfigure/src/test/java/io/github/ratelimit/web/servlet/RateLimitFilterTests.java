package io.github.ratelimit.web.servlet;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.RequestPostProcessor;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.RecordingObserver;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.web.FilterRule;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.MatchMode;
import io.github.ratelimit.web.RateLimitHeaders;
import io.github.ratelimit.web.RateLimitProblem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.not;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.head;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Tests for {@link RateLimitFilter} through MockMvc, with an in-memory store on a manual
 * clock and a waiter in virtual time.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class RateLimitFilterTests {

	private final WebTestSupport support = new WebTestSupport();

	/** Token bucket, 2 per minute: one permit comes back every 30 seconds. */
	private final Bucket api = WebTestSupport.bucket("api", LimitSpec.of(2, "1m", Algorithm.TOKEN_BUCKET));

	@Test
	void aRuleWithSettleReservesItsCostAndSettlesWhatTheResponseSays() throws Exception {
		Bucket tokens = WebTestSupport.bucket("tokens", LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW));
		RateLimitFilter limiting = this.support.filter(MatchMode.FIRST,
				this.support.rule(0, tokens)
					.cost("#request.getParameter('max')")
					.settle("#status >= 500 ? 0 : #header('X-Tokens-Used')"));
		// The backend: says what it used in a header, or fails.
		Filter backend = (request, response, chain) -> {
			if (request.getParameter("fail") != null) {
				((HttpServletResponse) response).sendError(500);
				return;
			}
			if (request.getParameter("used") != null) {
				((HttpServletResponse) response).setHeader("X-Tokens-Used", request.getParameter("used"));
			}
			chain.doFilter(request, response);
		};
		MockMvc mvc = this.support.mvc(limiting, backend);
		mvc.perform(get("/a").param("max", "50").param("used", "20")).andExpect(status().isOk());
		assertThat(remaining(tokens)).as("20 used of 50 reserved").isEqualTo(80);
		mvc.perform(get("/a").param("max", "10").param("used", "30")).andExpect(status().isOk());
		assertThat(remaining(tokens)).as("30 used of 10 reserved").isEqualTo(50);
		mvc.perform(get("/a").param("max", "10").param("fail", "1")).andExpect(status().isInternalServerError());
		assertThat(remaining(tokens)).as("a failed request gives its reservation back").isEqualTo(50);
		mvc.perform(get("/a").param("max", "10")).andExpect(status().isOk());
		assertThat(remaining(tokens)).as("no header: the reservation stands").isEqualTo(40);
		// 100 used of 5 reserved: the 35 left are taken, 60 are owed; paid 36 seconds
		// (at 100 a minute) after the window ends, in 60.
		mvc.perform(get("/a").param("max", "5").param("used", "100")).andExpect(status().isOk());
		mvc.perform(get("/a").param("max", "1").param("used", "1"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "96"));
	}

	private long remaining(Bucket bucket) {
		return this.support.store.peek(bucket.name(), "", bucket.limits()).remaining();
	}

	@Test
	void allowedResponseShouldCarryDraftHeaders() throws Exception {
		MockMvc mvc = this.support
			.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, this.api).paths(List.of("/api/**"))));
		mvc.perform(get("/api/items"))
			.andExpect(status().isOk())
			.andExpect(header().string(RateLimitHeaders.POLICY, "\"api\";q=2;w=60"))
			.andExpect(header().string(RateLimitHeaders.RATE_LIMIT, "\"api\";r=1;t=30"))
			.andExpect(header().doesNotExist(RateLimitHeaders.LEGACY_LIMIT));
		mvc.perform(get("/api/items")).andExpect(header().string(RateLimitHeaders.RATE_LIMIT, "\"api\";r=0;t=60"));
	}

	@Test
	void limitReachedShouldRespondWith429ProblemAndNotCallTheChain() throws Exception {
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST,
				this.support.rule(0, this.api).key("#request.remoteAddr").paths(List.of("/api/**"))));
		mvc.perform(get("/api/items").with(remoteAddr("10.0.0.7"))).andExpect(status().isOk());
		mvc.perform(get("/api/items").with(remoteAddr("10.0.0.7"))).andExpect(status().isOk());
		mvc.perform(get("/api/items").with(remoteAddr("10.0.0.7")))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "30"))
			.andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(jsonPath("$.type").value(RateLimitProblem.QUOTA_EXCEEDED_TYPE))
			.andExpect(jsonPath("$.title").value(RateLimitProblem.QUOTA_EXCEEDED_TITLE))
			.andExpect(jsonPath("$.status").value(429))
			.andExpect(jsonPath("$.detail").value(containsString("'api'")))
			.andExpect(jsonPath("$.detail").value(not(containsString("10.0.0.7"))))
			.andExpect(jsonPath("$.instance").value("/api/items"))
			.andExpect(jsonPath("$.violated-policies[0]").value("api"))
			.andExpect(jsonPath("$.violated-policies.length()").value(1))
			.andExpect(header().string(RateLimitHeaders.POLICY, "\"api\";q=2;w=60"))
			.andExpect(header().string(RateLimitHeaders.RATE_LIMIT, "\"api\";r=0;t=60"));
		assertThat(this.support.handled).hasValue(2);
	}

	@Test
	void requestShouldBeAllowedAgainAfterRetryAfter() throws Exception {
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, this.api)));
		mvc.perform(get("/a"));
		mvc.perform(get("/a"));
		mvc.perform(get("/a")).andExpect(status().isTooManyRequests()).andExpect(header().string("Retry-After", "30"));
		this.support.time.advance(Duration.ofSeconds(30).minusMillis(1));
		mvc.perform(get("/a")).andExpect(status().isTooManyRequests()).andExpect(header().string("Retry-After", "1"));
		this.support.time.advance(Duration.ofMillis(1));
		mvc.perform(get("/a")).andExpect(status().isOk());
	}

	@Test
	void retryAfterShouldRoundUpSoThatWaitingThatLongIsEnough() throws Exception {
		// One permit every 3.333... seconds.
		Bucket thirds = WebTestSupport.bucket("thirds", LimitSpec.of(3, "10s", Algorithm.TOKEN_BUCKET));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, thirds)));
		for (int i = 0; i < 3; i++) {
			mvc.perform(get("/a")).andExpect(status().isOk());
		}
		String retryAfter = mvc.perform(get("/a"))
			.andExpect(status().isTooManyRequests())
			.andReturn()
			.getResponse()
			.getHeader("Retry-After");
		assertThat(retryAfter).isEqualTo("4");
		this.support.time.advance(Duration.ofSeconds(Long.parseLong(retryAfter)));
		mvc.perform(get("/a")).andExpect(status().isOk());
	}

	@Test
	void ruleShouldMatchByPathPattern() throws Exception {
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST,
				this.support.rule(0, tiny).paths(List.of("/api/**", "/users/{id}"))));
		mvc.perform(get("/public/page")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit"));
		mvc.perform(get("/public/page")).andExpect(status().isOk());
		mvc.perform(get("/users/7/orders")).andExpect(status().isOk());
		mvc.perform(get("/users/7")).andExpect(status().isOk()).andExpect(header().exists("RateLimit"));
		mvc.perform(get("/api/x/y")).andExpect(status().isTooManyRequests());
	}

	@Test
	void ruleShouldMatchThePathWithoutTheContextPath() throws Exception {
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support
			.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, tiny).paths(List.of("/api/**"))));
		mvc.perform(get("/app/api/items").contextPath("/app")).andExpect(status().isOk());
		mvc.perform(get("/app/api/items").contextPath("/app")).andExpect(status().isTooManyRequests());
	}

	@Test
	void ruleShouldMatchByMethod() throws Exception {
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support
			.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, tiny).methods(List.of("post"))));
		mvc.perform(get("/login")).andExpect(status().isOk());
		mvc.perform(get("/login")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit"));
		mvc.perform(post("/login")).andExpect(status().isOk());
		mvc.perform(post("/login")).andExpect(status().isTooManyRequests());
	}

	@Test
	void getRuleShouldAlsoLimitHead() throws Exception {
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support
			.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, tiny).methods(List.of("GET"))));
		mvc.perform(get("/page")).andExpect(status().isOk());
		mvc.perform(head("/page")).andExpect(status().isTooManyRequests());
	}

	@Test
	void firstMatchShouldApplyOnlyTheFirstMatchingRule() throws Exception {
		Bucket login = WebTestSupport.bucket("login", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		Bucket all = WebTestSupport.bucket("all", LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST,
				this.support.rule(0, login).paths(List.of("/login")), this.support.rule(1, all)));
		mvc.perform(get("/login")).andExpect(header().string("RateLimit", "\"login\";r=0;t=60"));
		mvc.perform(get("/other")).andExpect(header().string("RateLimit", "\"all\";r=99;t=60"));
		mvc.perform(get("/login")).andExpect(status().isTooManyRequests());
		assertThat(this.support.store.peek("all", "", all.limits()).remaining()).isEqualTo(99);
	}

	@Test
	void allMatchShouldApplyEveryMatchingRule() throws Exception {
		Bucket login = WebTestSupport.bucket("login", LimitSpec.of(5, "1m", Algorithm.FIXED_WINDOW));
		Bucket all = WebTestSupport.bucket("all", LimitSpec.of(100, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.ALL,
				this.support.rule(0, login).paths(List.of("/login")), this.support.rule(1, all)));
		mvc.perform(get("/login"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"login\";q=5;w=60, \"all\";q=100;w=60"))
			.andExpect(header().string("RateLimit", "\"login\";r=4;t=60, \"all\";r=99;t=60"));
		mvc.perform(get("/other")).andExpect(header().string("RateLimit", "\"all\";r=98;t=60"));
	}

	@Test
	void allMatchShouldGiveBackPermitsOfEarlierRulesWhenALaterRuleRejects() throws Exception {
		Bucket site = WebTestSupport.bucket("site", LimitSpec.of(10, "1m", Algorithm.TOKEN_BUCKET));
		Bucket perClient = WebTestSupport.bucket("per-client", LimitSpec.of(1, "1m", Algorithm.SLIDING_LOG));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.ALL, this.support.rule(0, site),
				this.support.rule(1, perClient).key("#request.remoteAddr")));
		mvc.perform(get("/a").with(remoteAddr("10.0.0.1"))).andExpect(status().isOk());
		for (int i = 0; i < 3; i++) {
			mvc.perform(get("/a").with(remoteAddr("10.0.0.1")))
				.andExpect(status().isTooManyRequests())
				.andExpect(jsonPath("$.violated-policies[0]").value("per-client"));
		}
		assertThat(this.support.store.peek("site", "", site.limits()).remaining()).isEqualTo(9);
		assertThat(this.support.handled).hasValue(1);
	}

	@Test
	void keyByRemoteAddressShouldLimitEachClientSeparately() throws Exception {
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support
			.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, tiny).key("#request.remoteAddr")));
		mvc.perform(get("/a").with(remoteAddr("10.0.0.1"))).andExpect(status().isOk());
		mvc.perform(get("/a").with(remoteAddr("10.0.0.2"))).andExpect(status().isOk());
		mvc.perform(get("/a").with(remoteAddr("10.0.0.1"))).andExpect(status().isTooManyRequests());
		mvc.perform(get("/a").with(remoteAddr("10.0.0.2"))).andExpect(status().isTooManyRequests());
	}

	@Test
	void keyByHeaderShouldLimitEachApiKeySeparately() throws Exception {
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST,
				this.support.rule(0, tiny).key("#request.getHeader('X-Api-Key')")));
		mvc.perform(get("/a").header("X-Api-Key", "k1")).andExpect(status().isOk());
		mvc.perform(get("/a").header("X-Api-Key", "k2")).andExpect(status().isOk());
		mvc.perform(get("/a").header("X-Api-Key", "k1"))
			.andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$.detail").value(not(containsString("k1"))));
	}

	@Test
	void emptyKeyShouldShareOneLimitBetweenClients() throws Exception {
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, tiny)));
		mvc.perform(get("/a").with(remoteAddr("10.0.0.1"))).andExpect(status().isOk());
		mvc.perform(get("/a").with(remoteAddr("10.0.0.2"))).andExpect(status().isTooManyRequests());
	}

	@Test
	void nullKeyWithErrorPolicyShouldRespondWith400() throws Exception {
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST,
				this.support.rule(0, this.api).key("#request.getHeader('X-Api-Key')")));
		mvc.perform(get("/a"))
			.andExpect(status().isBadRequest())
			.andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(jsonPath("$.status").value(400))
			.andExpect(header().doesNotExist("RateLimit"));
		mvc.perform(get("/a")).andExpect(status().isBadRequest());
		assertThat(this.support.handled).hasValue(0);
	}

	@Test
	void nullKeyWithErrorPolicyShouldGiveBackPermitsOfEarlierRules() throws Exception {
		Bucket site = WebTestSupport.bucket("site", LimitSpec.of(10, "1m", Algorithm.TOKEN_BUCKET));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.ALL, this.support.rule(0, site),
				this.support.rule(1, this.api).key("#request.getHeader('X-Api-Key')")));
		mvc.perform(get("/a")).andExpect(status().isBadRequest());
		assertThat(this.support.store.peek("site", "", site.limits()).remaining()).isEqualTo(10);
	}

	@Test
	void nullKeyWithSkipPolicyShouldLetTheRequestThroughUnlimited() throws Exception {
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST,
				this.support.rule(0, tiny).key("#request.getHeader('X-Api-Key')").nullKeyPolicy(NullKeyPolicy.SKIP)));
		for (int i = 0; i < 3; i++) {
			mvc.perform(get("/a")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit"));
		}
		mvc.perform(get("/a").header("X-Api-Key", "k1")).andExpect(status().isOk());
		mvc.perform(get("/a").header("X-Api-Key", "k1")).andExpect(status().isTooManyRequests());
	}

	@Test
	void costExpressionShouldTakeThatManyPermits() throws Exception {
		Bucket ten = WebTestSupport.bucket("ten", LimitSpec.of(10, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST,
				this.support.rule(0, ten).cost("#request.getParameter('n') ?: 1")));
		mvc.perform(get("/a").param("n", "4")).andExpect(header().string("RateLimit", "\"ten\";r=6;t=60"));
		mvc.perform(get("/a")).andExpect(header().string("RateLimit", "\"ten\";r=5;t=60"));
		mvc.perform(get("/a").param("n", "6")).andExpect(status().isTooManyRequests());
	}

	@Test
	void costAboveCapacityShouldBeRejectedWithoutRetryAfter() throws Exception {
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST,
				this.support.rule(0, this.api).cost("#request.getParameter('n')")));
		mvc.perform(get("/a").param("n", "3"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().doesNotExist("Retry-After"))
			.andExpect(jsonPath("$.detail").value(containsString("retrying will not help")))
			.andExpect(jsonPath("$.violated-policies[0]").value("api"));
	}

	@Test
	void legacyHeadersShouldDescribeTheLimit() throws Exception {
		WebTestSupport legacy = new WebTestSupport(HeadersMode.LEGACY);
		MockMvc mvc = legacy.mvc(legacy.filter(MatchMode.FIRST, legacy.rule(0, this.api)));
		mvc.perform(get("/a"))
			.andExpect(header().string(RateLimitHeaders.LEGACY_LIMIT, "2"))
			.andExpect(header().string(RateLimitHeaders.LEGACY_REMAINING, "1"))
			.andExpect(header().string(RateLimitHeaders.LEGACY_RESET, "30"))
			.andExpect(header().doesNotExist(RateLimitHeaders.RATE_LIMIT))
			.andExpect(header().doesNotExist(RateLimitHeaders.POLICY));
		mvc.perform(get("/a"));
		mvc.perform(get("/a"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string(RateLimitHeaders.LEGACY_REMAINING, "0"))
			.andExpect(header().string(RateLimitHeaders.LEGACY_RESET, "60"));
	}

	@Test
	void bothShouldWriteDraftAndLegacyHeaders() throws Exception {
		WebTestSupport both = new WebTestSupport(HeadersMode.BOTH);
		MockMvc mvc = both.mvc(both.filter(MatchMode.FIRST, both.rule(0, this.api)));
		mvc.perform(get("/a"))
			.andExpect(header().string(RateLimitHeaders.RATE_LIMIT, "\"api\";r=1;t=30"))
			.andExpect(header().string(RateLimitHeaders.POLICY, "\"api\";q=2;w=60"))
			.andExpect(header().string(RateLimitHeaders.LEGACY_LIMIT, "2"))
			.andExpect(header().string(RateLimitHeaders.LEGACY_REMAINING, "1"))
			.andExpect(header().string(RateLimitHeaders.LEGACY_RESET, "30"));
	}

	@Test
	void noneShouldWriteNoLimitHeadersButStillRetryAfter() throws Exception {
		WebTestSupport none = new WebTestSupport(HeadersMode.NONE);
		MockMvc mvc = none.mvc(none.filter(MatchMode.FIRST, none.rule(0, this.api)));
		mvc.perform(get("/a"))
			.andExpect(status().isOk())
			.andExpect(header().doesNotExist(RateLimitHeaders.RATE_LIMIT))
			.andExpect(header().doesNotExist(RateLimitHeaders.POLICY))
			.andExpect(header().doesNotExist(RateLimitHeaders.LEGACY_LIMIT));
		mvc.perform(get("/a"));
		mvc.perform(get("/a"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "30"))
			.andExpect(header().doesNotExist(RateLimitHeaders.RATE_LIMIT))
			.andExpect(header().doesNotExist(RateLimitHeaders.LEGACY_REMAINING));
	}

	@Test
	void severalLimitsInOneBucketShouldBeOneMemberEach() throws Exception {
		Bucket tiered = WebTestSupport.bucket("api", LimitSpec.of(10, "1s", Algorithm.SLIDING_LOG),
				LimitSpec.of(1000, "1h", Algorithm.SLIDING_LOG));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, tiered)));
		mvc.perform(get("/a"))
			.andExpect(header().string(RateLimitHeaders.POLICY, "\"api-1s\";q=10;w=1, \"api-1h\";q=1000;w=3600"))
			.andExpect(header().string(RateLimitHeaders.RATE_LIMIT, "\"api-1s\";r=9;t=1, \"api-1h\";r=999;t=3600"));
		for (int i = 0; i < 9; i++) {
			mvc.perform(get("/a")).andExpect(status().isOk());
		}
		mvc.perform(get("/a"))
			.andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$.violated-policies.length()").value(1))
			.andExpect(jsonPath("$.violated-policies[0]").value("api-1s"))
			.andExpect(header().string("Retry-After", "1"));
	}

	@Test
	void shadowBucketShouldLetEveryRequestThroughWithoutHeaders() throws Exception {
		Bucket trial = WebTestSupport.shadowBucket("trial", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, trial)));
		for (int i = 0; i < 3; i++) {
			mvc.perform(get("/a")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit"));
		}
		assertThat(this.support.handled).hasValue(3);
	}

	@Test
	void leakyBucketShouldDelayTheRequestUntilItsSlot() throws Exception {
		// One slot every 100ms; the clock stands still between the requests, so the
		// second request is told to wait exactly one interval, and waits it in virtual
		// time.
		Bucket smooth = WebTestSupport.bucket("smooth", LimitSpec.of(5, "500ms", Algorithm.LEAKY_BUCKET));
		MockMvc mvc = this.support.mvc(this.support.filter(MatchMode.FIRST, this.support.rule(0, smooth)));
		mvc.perform(get("/a")).andExpect(status().isOk());
		assertThat(this.support.waiter.sleeps()).isEmpty();
		mvc.perform(get("/a")).andExpect(status().isOk());
		assertThat(this.support.waiter.sleeps()).containsExactly(100_000L);
		assertThat(this.support.handled).hasValue(2);
	}

	@Test
	void decisionsShouldBeObservedOncePerRuleWithTheirOutcome() throws Exception {
		RecordingObserver observer = new RecordingObserver();
		Bucket site = WebTestSupport.bucket("site", LimitSpec.of(10, "1m", Algorithm.TOKEN_BUCKET));
		Bucket tiny = WebTestSupport.bucket("tiny", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		Bucket trial = WebTestSupport.shadowBucket("trial", LimitSpec.of(1, "1m", Algorithm.FIXED_WINDOW));
		List<FilterRule> rules = Stream
			.of(this.support.rule(0, trial), this.support.rule(1, site), this.support.rule(2, tiny))
			.map((rule) -> rule.build(this.support.expressions, HttpServletRequest.class))
			.toList();
		Acquirer acquirer = Acquirer.builder(this.support.store).waiter(this.support.waiter).observer(observer).build();
		RateLimitFilter filter = new RateLimitFilter(new FilterRules(rules, MatchMode.ALL), acquirer,
				this.support.responses);
		MockMvc mvc = this.support.mvc(filter);
		mvc.perform(get("/a")).andExpect(status().isOk());
		mvc.perform(get("/a")).andExpect(status().isTooManyRequests());
		assertThat(observer.outcomes()).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.ALLOWED,
				Outcome.SHADOW_REJECTED, Outcome.ALLOWED, Outcome.REJECTED);
		assertThat(this.support.store.peek("site", "", site.limits()).remaining()).as("given back").isEqualTo(9);
	}

	@Test
	void unmatchedRequestShouldNotBeTouched() throws Exception {
		MockMvc mvc = this.support
			.mvc(this.support.filter(MatchMode.ALL, this.support.rule(0, this.api).paths(List.of("/api/**"))));
		for (int i = 0; i < 5; i++) {
			mvc.perform(get("/static/app.js"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist(RateLimitHeaders.POLICY));
		}
	}

	private static RequestPostProcessor remoteAddr(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}

}
