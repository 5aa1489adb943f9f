package io.github.ratelimit.web;

import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.mock.web.MockHttpServletRequest;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.expression.RateLimitExpressions.InvalidExpressionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link FilterRule}: parsing, validation, matching and evaluation.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class FilterRuleTests {

	private static final String NAME = "ratelimit.filter.rules[3]";

	private final RateLimitExpressions expressions = new RateLimitExpressions(null);

	private final Bucket bucket = Bucket.of("api", LimitSpec.of(5, "1m", Algorithm.GCRA));

	@Test
	void badKeyExpressionShouldFailNamingThePropertyAndTheExpression() {
		assertThatIllegalStateException()
			.isThrownBy(() -> FilterRule.builder(NAME, this.bucket)
				.key("#request.getHeader('X")
				.build(this.expressions, HttpServletRequest.class))
			.withMessageContaining("ratelimit.filter.rules[3].key")
			.withMessageContaining("#request.getHeader('X");
	}

	@Test
	void badCostExpressionShouldFailNamingTheProperty() {
		assertThatIllegalStateException()
			.isThrownBy(() -> FilterRule.builder(NAME, this.bucket)
				.cost("#request.(")
				.build(this.expressions, HttpServletRequest.class))
			.withMessageContaining("ratelimit.filter.rules[3].cost")
			.withMessageContaining("#request.(");
	}

	@Test
	void constantCostBelowOneShouldFailNamingTheProperty() {
		assertThatExceptionOfType(InvalidFilterRuleException.class).isThrownBy(
				() -> FilterRule.builder(NAME, this.bucket).cost("0").build(this.expressions, HttpServletRequest.class))
			.withMessageContaining("ratelimit.filter.rules[3].cost")
			.withMessageContaining("at least 1");
	}

	@Test
	void evaluatedCostThatIsNotAWholeNumberShouldFailNamingTheProperty() {
		FilterRule rule = FilterRule.builder(NAME, this.bucket)
			.cost("1.5")
			.build(this.expressions, HttpServletRequest.class);
		assertThatIllegalStateException().isThrownBy(() -> rule.cost(new MockHttpServletRequest()))
			.withMessageContaining("ratelimit.filter.rules[3].cost '1.5'")
			.withMessageContaining("whole number");
		FilterRule zero = FilterRule.builder(NAME, this.bucket)
			.cost("2 - 2")
			.build(this.expressions, HttpServletRequest.class);
		assertThatIllegalStateException().isThrownBy(() -> zero.cost(new MockHttpServletRequest()))
			.withMessageContaining("at least 1");
	}

	@Test
	void evaluatedCostMayBeAnyWholeNumber() {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setParameter("n", "7");
		assertThat(FilterRule.builder(NAME, this.bucket)
			.cost("#request.getParameter('n')")
			.build(this.expressions, HttpServletRequest.class)
			.cost(request)).isEqualTo(7);
		assertThat(FilterRule.builder(NAME, this.bucket)
			.cost("3.0")
			.build(this.expressions, HttpServletRequest.class)
			.cost(request)).isEqualTo(3);
		assertThat(FilterRule.builder(NAME, this.bucket)
			.cost(" 2 ")
			.build(this.expressions, HttpServletRequest.class)
			.cost(request)).isEqualTo(2);
	}

	@Test
	void keyReadingAPropertyTheRequestDoesNotHaveShouldFailNamingThePropertyAndSuggestingOne() {
		assertThatExceptionOfType(InvalidFilterRuleException.class)
			.isThrownBy(() -> FilterRule.builder(NAME, this.bucket)
				.key("#request.remoteAdr")
				.build(this.expressions, HttpServletRequest.class))
			.withMessage("ratelimit.filter.rules[3].key '#request.remoteAdr': HttpServletRequest has no property "
					+ "'remoteAdr'; did you mean '#request.remoteAddr'?")
			.satisfies((ex) -> {
				assertThat(ex.getProperty()).isEqualTo("ratelimit.filter.rules[3].key");
				assertThat(ex.getAction()).startsWith(
						"Change ratelimit.filter.rules[3].key to read what HttpServletRequest offers, e.g. #request.remoteAddr");
			});
	}

	@Test
	void theServletFormOfReadingAHeaderOnAWebFluxRequestShouldSuggestTheWebFluxForm() {
		assertThatExceptionOfType(InvalidFilterRuleException.class)
			.isThrownBy(() -> FilterRule.builder(NAME, this.bucket)
				.key("#request.getHeader('X-Tenant')")
				.build(this.expressions, ServerHttpRequest.class))
			.withMessage("ratelimit.filter.rules[3].key '#request.getHeader('X-Tenant')': ServerHttpRequest has no "
					+ "method 'getHeader'; did you mean '#request.headers.getFirst(...)'?");
	}

	@Test
	void keyOrCostCallingAMethodTheRequestDoesNotHaveShouldFail() {
		assertThatExceptionOfType(InvalidFilterRuleException.class)
			.isThrownBy(() -> FilterRule.builder(NAME, this.bucket)
				.key("'k:' + #request.getHeaders('X-Api-Key')")
				.cost("#request.getHeder('X-Cost')")
				.build(this.expressions, HttpServletRequest.class))
			.withMessageContaining("ratelimit.filter.rules[3].cost")
			.withMessageContaining("no method 'getHeder'")
			.withMessageContaining("'#request.getHeader(...)'");
	}

	@Test
	void keysReadingWhatTheRequestOffersShouldBuild() {
		for (String key : List.of("#request.remoteAddr", "#request.getHeader('X-Api-Key') ?: #request.remoteAddr",
				"#request.userPrincipal?.name", "#request.secure", "#request.requestURI", "@plans.tier(#request)")) {
			assertThat(FilterRule.builder(NAME, this.bucket).key(key).build(this.expressions, HttpServletRequest.class))
				.isNotNull();
		}
	}

	@Test
	void badPathPatternShouldFailNamingTheProperty() {
		assertThatExceptionOfType(InvalidFilterRuleException.class)
			.isThrownBy(() -> FilterRule.builder(NAME, this.bucket)
				.paths(List.of("/ok/**", "/api/{id"))
				.build(this.expressions, HttpServletRequest.class))
			.withMessageContaining("ratelimit.filter.rules[3].paths[1]")
			.withMessageContaining("/api/{id");
	}

	@Test
	void unknownMethodShouldFailNamingTheProperty() {
		assertThatExceptionOfType(InvalidFilterRuleException.class)
			.isThrownBy(() -> FilterRule.builder(NAME, this.bucket)
				.methods(List.of("GET", "GETT"))
				.build(this.expressions, HttpServletRequest.class))
			.withMessageContaining("ratelimit.filter.rules[3].methods[1]")
			.withMessageContaining("'GETT'")
			.withMessageContaining("POST");
	}

	@Test
	void ruleWithoutPathsOrMethodsShouldMatchEverything() {
		FilterRule rule = FilterRule.builder(NAME, this.bucket).build(this.expressions, HttpServletRequest.class);
		assertThat(rule.hasPaths()).isFalse();
		assertThat(rule.matches("DELETE", null)).isTrue();
		assertThat(rule.matches("GET", PathContainer.parsePath("/anything"))).isTrue();
	}

	@Test
	void methodsShouldMatchCaseInsensitivelyAndGetShouldCoverHead() {
		FilterRule rule = FilterRule.builder(NAME, this.bucket)
			.methods(List.of("get", "Post"))
			.build(this.expressions, HttpServletRequest.class);
		assertThat(rule.matches("GET", null)).isTrue();
		assertThat(rule.matches("HEAD", null)).isTrue();
		assertThat(rule.matches("POST", null)).isTrue();
		assertThat(rule.matches("PUT", null)).isFalse();
	}

	@Test
	void pathsShouldMatchAnyOfThePatterns() {
		FilterRule rule = FilterRule.builder(NAME, this.bucket)
			.paths(List.of("/api/**", "/login"))
			.build(this.expressions, HttpServletRequest.class);
		assertThat(rule.matches("GET", PathContainer.parsePath("/api"))).isTrue();
		assertThat(rule.matches("GET", PathContainer.parsePath("/api/v1/items"))).isTrue();
		assertThat(rule.matches("GET", PathContainer.parsePath("/login"))).isTrue();
		assertThat(rule.matches("GET", PathContainer.parsePath("/login/x"))).isFalse();
		assertThat(rule.matches("GET", PathContainer.parsePath("/apis"))).isFalse();
	}

	@Test
	void emptyKeyShouldBeTheSharedKey() {
		assertThat(FilterRule.builder(NAME, this.bucket)
			.key("  ")
			.build(this.expressions, HttpServletRequest.class)
			.key(request())).isEmpty();
	}

	@Test
	void keyShouldSeeTheRequestAndBeans() {
		DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
		beans.registerSingleton("tenants", new Tenants());
		FilterRule rule = FilterRule.builder(NAME, this.bucket)
			.key("@tenants.of(#request.getHeader('Host'))")
			.build(new RateLimitExpressions(beans), HttpServletRequest.class);
		MockHttpServletRequest request = request();
		request.addHeader("Host", "acme.example.com");
		assertThat(rule.key(request)).isEqualTo("tenant-acme");
	}

	@Test
	void keyThatEvaluatesToNullShouldBeNull() {
		FilterRule rule = FilterRule.builder(NAME, this.bucket)
			.key("#request.getHeader('X-Api-Key')")
			.build(this.expressions, HttpServletRequest.class);
		assertThat(rule.key(request())).isNull();
		assertThat(rule.firstNullKey()).isTrue();
		assertThat(rule.firstNullKey()).isFalse();
	}

	@Test
	void nonStringKeyShouldBeItsText() {
		FilterRule rule = FilterRule.builder(NAME, this.bucket)
			.key("#request.serverPort")
			.build(this.expressions, HttpServletRequest.class);
		assertThat(rule.key(request())).isEqualTo("80");
	}

	@Test
	void requestPropertyKeyShouldBeWhatSpelReads() {
		MockHttpServletRequest request = request();
		request.setRemoteAddr("10.1.2.3");
		StandardEvaluationContext context = this.expressions.context(null);
		context.setVariable("request", request);
		for (String key : List.of("#request.remoteAddr", "#request.requestURI", "#request.method",
				"#request.serverPort", "#request.remoteUser", "#request.getRemoteAddr()", "#request.remoteAddr + ''")) {
			Object spel = this.expressions.parse(key, "test").getValue(context);
			assertThat(FilterRule.builder(NAME, this.bucket)
				.key(key)
				.build(this.expressions, HttpServletRequest.class)
				.key(request)).as(key).isEqualTo((spel != null) ? spel.toString() : null);
		}
	}

	@Test
	void requestMethodOfOneTextKeyShouldBeWhatSpelReadsWithoutSpel() {
		MockHttpServletRequest request = request();
		request.addHeader("X-Api-Key", "key-1");
		request.addParameter("tenant", "acme");
		request.setAttribute("n", 42);
		StandardEvaluationContext context = this.expressions.context(null);
		context.setVariable("request", request);
		for (String key : List.of("#request.getHeader('X-Api-Key')", "#request.getHeader( 'x-api-key' )",
				"#request.getHeader('Missing')", "#request.getHeader('')", "#request.getParameter('tenant')",
				"#request.getAttribute('n')", "#request.getAttribute('none')")) {
			Object spel = this.expressions.parse(key, "test").getValue(context);
			FilterRule rule = FilterRule.builder(NAME, this.bucket)
				.key(key)
				.build(this.expressions, HttpServletRequest.class);
			assertThat(rule.readsKeyDirectly()).as(key).isTrue();
			assertThat(rule.key(request)).as(key).isEqualTo((spel != null) ? spel.toString() : null);
		}
		// Anything else is SpEL's: escaped quotes, other arguments, more than a call.
		for (String key : List.of("#request.getHeader('It''s')", "#request.getHeader(\"X\")",
				"#request.getIntHeader('X')+1", "#request.getHeader('A') ?: #request.remoteAddr",
				"#request.getHeaders('X-Api-Key').hasMoreElements()")) {
			assertThat(FilterRule.builder(NAME, this.bucket)
				.key(key)
				.build(this.expressions, HttpServletRequest.class)
				.readsKeyDirectly()).as(key).isFalse();
		}
	}

	@Test
	void requestMethodOfOneTextKeyShouldReadWhatAWrappedRequestAnswersAndFailAsSpelDoes() {
		HttpServletRequest wrapped = new HttpServletRequestWrapper(request()) {

			@Override
			public String getHeader(String name) {
				if (name.equals("Broken")) {
					throw new IllegalStateException("no header");
				}
				return name.toLowerCase(java.util.Locale.ROOT);
			}

		};
		assertThat(FilterRule.builder(NAME, this.bucket)
			.key("#request.getHeader('X-Api-Key')")
			.build(this.expressions, HttpServletRequest.class)
			.key(wrapped)).isEqualTo("x-api-key");
		FilterRule broken = FilterRule.builder(NAME, this.bucket)
			.key("#request.getHeader('Broken')")
			.build(this.expressions, HttpServletRequest.class);
		// SpEL throws what the method threw.
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> broken.key(wrapped))
			.withMessage("no header");
	}

	@Test
	void requestPropertyKeyShouldReadWhatAWrappedRequestAnswers() {
		HttpServletRequest wrapped = new HttpServletRequestWrapper(request()) {

			@Override
			public String getRemoteAddr() {
				return "10.9.9.9";
			}

			public String getTenant() {
				return "acme";
			}

		};
		assertThat(FilterRule.builder(NAME, this.bucket)
			.key("#request.remoteAddr")
			.build(this.expressions, HttpServletRequest.class)
			.key(wrapped)).isEqualTo("10.9.9.9");
		// Rules are checked against the request type at startup: a property only a
		// wrapper has is read as a request attribute instead.
		assertThatExceptionOfType(InvalidFilterRuleException.class)
			.isThrownBy(() -> FilterRule.builder(NAME, this.bucket)
				.key("#request.tenant")
				.build(this.expressions, HttpServletRequest.class))
			.withMessageContaining("HttpServletRequest has no property 'tenant'");
		wrapped.setAttribute("tenant", "acme");
		assertThat(FilterRule.builder(NAME, this.bucket)
			.key("#request.getAttribute('tenant')")
			.build(this.expressions, HttpServletRequest.class)
			.key(wrapped)).isEqualTo("acme");
	}

	@Test
	void requestPropertyKeyWhoseGetterThrowsShouldFailNamingThePropertyAndTheExpression() {
		HttpServletRequest failing = new HttpServletRequestWrapper(request()) {

			@Override
			public String getRemoteAddr() {
				throw new IllegalStateException("no address");
			}

		};
		FilterRule rule = FilterRule.builder(NAME, this.bucket)
			.key("#request.remoteAddr")
			.build(this.expressions, HttpServletRequest.class);
		assertThatExceptionOfType(InvalidExpressionException.class).isThrownBy(() -> rule.key(failing))
			.withMessageContaining("ratelimit.filter.rules[3].key")
			.withMessageContaining("#request.remoteAddr");
	}

	@Test
	void requestPropertyKeyShouldBeReadOnTheTypeTheRuleIsBuiltFor() {
		FilterRule rule = FilterRule.builder(NAME, this.bucket)
			.key("#request.name")
			.build(this.expressions, Named.class);
		assertThat(rule.key(new Named("acme"))).isEqualTo("acme");
		assertThat(rule.cost(new Named("acme"))).isEqualTo(1);
	}

	@Test
	void stringCostShouldBeAWholeNumberAsForTheAnnotation() {
		MockHttpServletRequest request = request();
		request.setParameter("n", "4.0");
		assertThat(FilterRule.builder(NAME, this.bucket)
			.cost("#request.getParameter('n')")
			.build(this.expressions, HttpServletRequest.class)
			.cost(request)).isEqualTo(4);
	}

	private static MockHttpServletRequest request() {
		return new MockHttpServletRequest("GET", "/api/items");
	}

	/**
	 * A request object of another stack.
	 *
	 * @param name what the key reads
	 */
	public record Named(String name) {

		/**
		 * Returns the name as a JavaBeans getter.
		 * @return the name
		 */
		public String getName() {
			return this.name;
		}

	}

	/**
	 * A bean the key expression calls.
	 */
	static class Tenants {

		public String of(String host) {
			return "tenant-" + host.substring(0, host.indexOf('.'));
		}

	}

}
