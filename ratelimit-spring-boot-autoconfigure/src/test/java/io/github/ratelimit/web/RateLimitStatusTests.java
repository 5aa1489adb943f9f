package io.github.ratelimit.web;

import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.bucket.KeyStateReader;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.status.FailureMode;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.FilterRulesTests.Request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

/**
 * Tests for {@link RateLimitStatus}, the answer of the status endpoint on any stack:
 * several limits of one bucket, rules a request has no key for, and a store that cannot
 * answer. The HTTP side, on both stacks and both stores, is in
 * {@code StatusEndpointHttpTests}.
 */
class RateLimitStatusTests {

	private final RateLimitExpressions expressions = new RateLimitExpressions(null);

	private final Bucket login = Bucket.of("login", LimitSpec.of(5, "1m", Algorithm.SLIDING_LOG));

	/** Slow enough that nothing comes back while a test runs on the real clock. */
	private final Bucket api = Bucket.of("api", LimitSpec.of(10, "1h", Algorithm.TOKEN_BUCKET),
			LimitSpec.of(1000, "1d", Algorithm.SLIDING_LOG));

	private final RateLimitStore store = InMemoryRateLimitStore.builder().build();

	@Test
	void eachLimitOfABucketIsAPolicyNamedAsTheHeadersNameIt() {
		this.store.decide("api", "ann", this.api.limits(), 4);
		RateLimitStatus status = status(this.store, FailureMode.FALLBACK, rule(0, this.api, "#request.user"));
		RateLimitStatus.Answer answer = status.answer(new Request(Map.of("user", "ann")), null, null, "/rate-limit");
		assertThat(answer.status()).isEqualTo(200);
		String body = answer.body();
		assertThat(JsonPath.<List<String>>read(body, "$.limits[0].policies[*].name")).containsExactly("api-1h",
				"api-1d");
		assertThat(JsonPath.<List<Integer>>read(body, "$.limits[0].policies[*].remaining")).containsExactly(6, 996);
		assertThat(JsonPath.<Integer>read(body, "$.limits[0].policies[0].burst")).isEqualTo(10);
		// The limit and window shown first are those of the limit with least left.
		assertThat(JsonPath.<Integer>read(body, "$.limits[0].limit")).isEqualTo(10);
		assertThat(JsonPath.<String>read(body, "$.limits[0].window")).isEqualTo("1h");
		assertThat(JsonPath.<Integer>read(body, "$.limits[0].remaining")).isEqualTo(6);
	}

	@Test
	void aRuleWithoutAKeyForTheRequestIsLeftOut() {
		RateLimitStatus status = status(this.store, FailureMode.FALLBACK, rule(0, this.login, "#request.user"),
				rule(1, this.api, ""));
		RateLimitStatus.Answer answer = status.answer(new Request(Map.of()), null, null, "/rate-limit");
		assertThat(JsonPath.<List<String>>read(answer.body(), "$.limits[*].bucket")).containsExactly("api");
	}

	@Test
	void aStoreThatCannotAnswerGivesTheSame503AsALimitedRequest() {
		RateLimitStore failing = mock(RateLimitStore.class);
		given(failing.peek(anyString(), anyString(), any()))
			.willThrow(new StoreUnavailableException("Rate limit store 'redis' is unavailable", null));
		RateLimitStatus.Answer answer = status(failing, FailureMode.FALLBACK, rule(0, this.api, ""))
			.answer(new Request(Map.of()), null, null, "/rate-limit");
		RateLimitProblem problem = RateLimitProblem.unavailable("/rate-limit");
		assertThat(answer).isEqualTo(new RateLimitStatus.Answer(problem.status(), problem.retryAfter(),
				RateLimitProblem.CONTENT_TYPE, problem.body()));
	}

	private RateLimitStatus status(RateLimitStore store, FailureMode failureMode, FilterRule... rules) {
		return new RateLimitStatus(new FilterRules(List.of(rules), MatchMode.ALL), new KeyStateReader(store),
				failureMode);
	}

	private FilterRule rule(int index, Bucket bucket, String key) {
		return FilterRule.builder("ratelimit.filter.rules[" + index + "]", bucket)
			.key(key)
			.nullKeyPolicy(NullKeyPolicy.ERROR)
			.build(this.expressions, Request.class);
	}

}
