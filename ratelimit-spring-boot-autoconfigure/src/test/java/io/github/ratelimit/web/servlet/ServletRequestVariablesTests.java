package io.github.ratelimit.web.servlet;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.expression.RateLimitExpressions;
import io.github.ratelimit.web.FilterRule;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ServletRequestVariables}: {@code #clientIp} on a servlet request is
 * what {@code #request.remoteAddr} gives, alone or inside a larger expression.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class ServletRequestVariablesTests {

	private final RateLimitExpressions expressions = new RateLimitExpressions(null);

	private final Bucket bucket = Bucket.of("api", LimitSpec.of(10, "1m", Algorithm.TOKEN_BUCKET));

	@Test
	void clientIpShouldBeTheRemoteAddress() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/api/items");
		request.setRemoteAddr("10.0.0.7");
		assertThat(key("#clientIp", request)).isEqualTo("10.0.0.7").isEqualTo(key("#request.remoteAddr", request));
		assertThat(key("'ip:' + #clientIp + ':' + #request.method", request)).isEqualTo("ip:10.0.0.7:GET");
	}

	private String key(String expression, MockHttpServletRequest request) {
		return FilterRule.builder("ratelimit.filter.rules[0]", this.bucket)
			.key(expression)
			.build(this.expressions, new ServletRequestVariables(ClientIpResolver.trustingNothing()))
			.key(request);
	}

}
