package io.github.ratelimit.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.http.server.PathContainer;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.InMemoryConcurrencyStore;
import io.github.ratelimit.concurrency.LeaseRenewer;
import io.github.ratelimit.expression.NullKeyPolicy;
import io.github.ratelimit.expression.RateLimitExpressions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link FilterRules}: which rules apply to a request and what they ask for, on
 * a request object that is no servlet request (the rules do not care which stack carries
 * the request).
 *
 * @author ratelimit-spring-boot-starter authors
 */
class FilterRulesTests {

	private final RateLimitExpressions expressions = new RateLimitExpressions(null);

	private final Bucket login = Bucket.of("login", LimitSpec.of(5, "1m", Algorithm.SLIDING_LOG));

	private final Bucket site = Bucket.of("site", LimitSpec.of(100, "1m", Algorithm.TOKEN_BUCKET));

	private final PathContainer loginPath = PathContainer.parsePath("/login");

	@Test
	void onlyOneRateAndOneConcurrencyLimitOfOneBucketAndKeyAreDecidedAtOnce() {
		try (LeaseRenewer renewer = new LeaseRenewer()) {
			ConcurrencyLimiter loginInFlight = new ConcurrencyLimiter(new InMemoryConcurrencyStore(), "login",
					new ConcurrencyLimit(2, Duration.ofSeconds(30)), renewer, List.of());
			PermitRequest ann = PermitRequest.of(this.login, "ann", 1);
			assertThat(new FilterRules.Plan(List.of(ann), List.of(),
					List.of(new InFlightPermits.Claim(loginInFlight, "ann")), null)
				.decidesBothAtOnce()).isTrue();
			assertThat(new FilterRules.Plan(List.of(ann), List.of(),
					List.of(new InFlightPermits.Claim(loginInFlight, "bob")), null)
				.decidesBothAtOnce()).as("another key").isFalse();
			assertThat(new FilterRules.Plan(List.of(PermitRequest.of(this.site, "ann", 1)), List.of(),
					List.of(new InFlightPermits.Claim(loginInFlight, "ann")), null)
				.decidesBothAtOnce()).as("another bucket").isFalse();
			assertThat(new FilterRules.Plan(List.of(ann, PermitRequest.of(this.site, "", 1)), List.of(),
					List.of(new InFlightPermits.Claim(loginInFlight, "ann")), null)
				.decidesBothAtOnce()).as("two rate limits").isFalse();
			assertThat(new FilterRules.Plan(List.of(ann), List.of(), List.of(), null).decidesBothAtOnce())
				.as("no concurrency limit")
				.isFalse();
		}
	}

	@Test
	void firstMatchShouldAskOnlyTheFirstMatchingRule() {
		FilterRules rules = new FilterRules(List.of(rule(0, this.login, "/login", "#request.user", NullKeyPolicy.ERROR),
				rule(1, this.site, null, "", NullKeyPolicy.ERROR)), MatchMode.FIRST);
		assertThat(rules.needsPath()).isTrue();
		assertThat(rules.plan(new Request(Map.of("user", "ann")), "POST", this.loginPath).requests())
			.containsExactly(PermitRequest.of(this.login, "ann", 1));
		assertThat(rules.plan(new Request(Map.of()), "GET", PathContainer.parsePath("/home")).requests())
			.containsExactly(PermitRequest.of(this.site, "", 1));
	}

	@Test
	void allMatchShouldAskEveryMatchingRuleInOrder() {
		FilterRules rules = new FilterRules(List.of(rule(0, this.login, "/login", "#request.user", NullKeyPolicy.ERROR),
				rule(1, this.site, null, "", NullKeyPolicy.ERROR)), MatchMode.ALL);
		assertThat(rules.plan(new Request(Map.of("user", "ann")), "POST", this.loginPath).requests())
			.containsExactly(PermitRequest.of(this.login, "ann", 1), PermitRequest.of(this.site, "", 1));
	}

	@Test
	void nullKeyShouldEndPlanningUnderErrorAndLeaveTheRuleOutUnderSkip() {
		FilterRule strict = rule(0, this.login, null, "#request.user", NullKeyPolicy.ERROR);
		FilterRules error = new FilterRules(List.of(strict, rule(1, this.site, null, "", NullKeyPolicy.ERROR)),
				MatchMode.ALL);
		FilterRules.Plan plan = error.plan(new Request(Map.of()), "GET", null);
		assertThat(plan.missingKey()).isSameAs(strict);
		assertThat(plan.requests()).isEmpty();
		FilterRules skip = new FilterRules(List.of(rule(0, this.login, null, "#request.user", NullKeyPolicy.SKIP),
				rule(1, this.site, null, "", NullKeyPolicy.ERROR)), MatchMode.ALL);
		assertThat(skip.plan(new Request(Map.of()), "GET", null).requests())
			.containsExactly(PermitRequest.of(this.site, "", 1));
		FilterRules skipFirst = new FilterRules(List.of(rule(0, this.login, null, "#request.user", NullKeyPolicy.SKIP),
				rule(1, this.site, null, "", NullKeyPolicy.ERROR)), MatchMode.FIRST);
		assertThat(skipFirst.plan(new Request(Map.of()), "GET", null).requests())
			.as("the first matching rule applies, unlimited")
			.isEmpty();
	}

	@Test
	void matchingShouldNameTheRulesOfARequestByTheMatchModeWithoutEvaluatingKeys() {
		FilterRule login = rule(0, this.login, "/login", "#request.user", NullKeyPolicy.ERROR);
		FilterRule site = rule(1, this.site, null, "", NullKeyPolicy.ERROR);
		assertThat(new FilterRules(List.of(login, site), MatchMode.ALL).matching("POST", this.loginPath))
			.containsExactly(login, site);
		assertThat(new FilterRules(List.of(login, site), MatchMode.FIRST).matching("POST", this.loginPath))
			.containsExactly(login);
		assertThat(new FilterRules(List.of(login, site), MatchMode.FIRST).matching("GET",
				PathContainer.parsePath("/home")))
			.containsExactly(site);
		assertThat(login.paths()).containsExactly("/login");
	}

	@Test
	void requestNoRuleMatchesShouldAskForNothing() {
		FilterRules rules = new FilterRules(List.of(rule(0, this.login, "/login", "", NullKeyPolicy.ERROR)),
				MatchMode.ALL);
		FilterRules.Plan plan = rules.plan(new Request(Map.of()), "GET", PathContainer.parsePath("/other"));
		assertThat(plan.requests()).isEmpty();
		assertThat(plan.missingKey()).isNull();
	}

	private FilterRule rule(int index, Bucket bucket, String path, String key, NullKeyPolicy nullKeyPolicy) {
		return FilterRule.builder("ratelimit.filter.rules[" + index + "]", bucket)
			.paths((path != null) ? List.of(path) : List.of())
			.key(key)
			.nullKeyPolicy(nullKeyPolicy)
			.build(this.expressions, Request.class);
	}

	/**
	 * A request of some other stack.
	 *
	 * @param attributes what it carries
	 */
	public record Request(Map<String, String> attributes) {

		/**
		 * Returns the user, as a getter a key can read.
		 * @return the user, or {@code null}
		 */
		public String getUser() {
			return this.attributes.get("user");
		}

	}

}
