package io.github.ratelimit.web.servlet;

import java.util.ArrayList;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.RateLimitHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RateLimitResponses}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class RateLimitResponsesTests {

	private final MockHttpServletRequest request = new MockHttpServletRequest("GET", "/api/items");

	private final MockHttpServletResponse response = new MockHttpServletResponse();

	private final RateLimitResponses responses = new RateLimitResponses(new RateLimitHeaders(HeadersMode.DRAFT));

	private final LimitSpec spec = LimitSpec.of(10, "1m", Algorithm.TOKEN_BUCKET);

	@Test
	void retryAfterShouldBeWholeSecondsRoundedUp() throws Exception {
		this.responses.writeRejection(this.request, this.response, "api",
				Decision.rejected(this.spec, 0, 60_000_000, 5_000_001));
		assertThat(this.response.getStatus()).isEqualTo(429);
		assertThat(this.response.getHeader("Retry-After")).isEqualTo("6");
		assertThat(detail()).isEqualTo("Rate limit 'api' exceeded; retry after 6 seconds.");
	}

	@Test
	void retryAfterShouldBeAtLeastOneSecond() throws Exception {
		this.responses.writeRejection(this.request, this.response, "api",
				Decision.rejected(this.spec, 0, 60_000_000, 1));
		assertThat(this.response.getHeader("Retry-After")).isEqualTo("1");
		assertThat(detail()).endsWith("retry after 1 second.");
	}

	@Test
	void nonRetryableRejectionShouldHaveNoRetryAfter() throws Exception {
		this.responses.writeRejection(this.request, this.response, "api",
				Decision.rejected(this.spec, 10, 0, Decision.NEVER));
		assertThat(this.response.getStatus()).isEqualTo(429);
		assertThat(this.response.getHeader("Retry-After")).isNull();
		assertThat(detail()).contains("retrying will not help");
	}

	@Test
	void bodyShouldBeAProblemDocumentNamingTheViolatedPolicies() throws Exception {
		LimitSpec hour = LimitSpec.of(1000, "1h", Algorithm.TOKEN_BUCKET);
		Decision combined = Decision.combine(List.of(Decision.allowed(this.spec, 3, 1_000_000, 0),
				Decision.rejected(hour, 0, 3_600_000_000L, 3_600_000)));
		this.responses.writeRejection(this.request, this.response, "api", combined);
		assertThat(this.response.getContentType()).isEqualTo("application/problem+json");
		String body = this.response.getContentAsString();
		assertThat(this.response.getContentLength()).isEqualTo(body.getBytes("UTF-8").length);
		assertThat((String) JsonPath.read(body, "$.type"))
			.isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
		assertThat((String) JsonPath.read(body, "$.title"))
			.isEqualTo("Request cannot be satisfied as assigned quota has been exceeded");
		assertThat((Integer) JsonPath.read(body, "$.status")).isEqualTo(429);
		assertThat((String) JsonPath.read(body, "$.instance")).isEqualTo("/api/items");
		assertThat(strings(body, "$.violated-policies")).containsExactly("api-1h");
		assertThat(this.response.getHeader(RateLimitHeaders.RATE_LIMIT))
			.isEqualTo("\"api-1m\";r=3;t=1, \"api-1h\";r=0;t=3600");
	}

	@Test
	void stringsShouldBeEscapedInTheBody() throws Exception {
		MockHttpServletRequest odd = new MockHttpServletRequest("GET", "/a\"b\\c\u2028");
		this.responses.writeRejection(odd, this.response, "q\"uote\u0001",
				Decision.rejected(this.spec, 0, 1, 1_000_000));
		String body = this.response.getContentAsString();
		assertThat(body).doesNotContain("\u2028").doesNotContain("\u0001");
		assertThat((String) JsonPath.read(body, "$.instance")).isEqualTo("/a\"b\\c\u2028");
		assertThat((String) JsonPath.read(body, "$.detail")).contains("'q\"uote\u0001'");
		assertThat(strings(body, "$.violated-policies")).containsExactly("q\"uote_");
	}

	@Test
	void missingKeyShouldBeA400Problem() throws Exception {
		this.responses.writeMissingKey(this.request, this.response);
		assertThat(this.response.getStatus()).isEqualTo(400);
		assertThat(this.response.getContentType()).isEqualTo("application/problem+json");
		assertThat((Integer) JsonPath.read(this.response.getContentAsString(), "$.status")).isEqualTo(400);
		assertThat((String) JsonPath.read(this.response.getContentAsString(), "$.title")).isEqualTo("Bad Request");
	}

	@Test
	void bodyShouldBeWrittenWhenTheHandlerAlreadyTookTheWriter() throws Exception {
		this.response.getWriter();
		this.responses.writeRejection(this.request, this.response, "api",
				Decision.rejected(this.spec, 0, 1, 1_000_000));
		assertThat((Integer) JsonPath.read(this.response.getContentAsString(), "$.status")).isEqualTo(429);
	}

	@Test
	void unavailableShouldBeA503ProblemWithRetryAfter() throws Exception {
		this.responses.writeUnavailable(this.request, this.response);
		assertThat(this.response.getStatus()).isEqualTo(503);
		assertThat(this.response.getHeader("Retry-After")).isEqualTo("1");
		assertThat((String) JsonPath.read(this.response.getContentAsString(), "$.instance")).isEqualTo("/api/items");
	}

	@Test
	void headersShouldBeAddedUntilTheResponseIsCommitted() throws Exception {
		RateLimitResult result = new RateLimitResult(PermitRequest.of(Bucket.of("a", this.spec), "", 1),
				Decision.allowed(this.spec, 4, 6_000_000, 0), Outcome.ALLOWED, -1);
		this.responses.addHeaders(this.request, this.response, result);
		assertThat(this.response.getHeader(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"a\";r=4;t=6");
		MockHttpServletResponse committed = new MockHttpServletResponse();
		committed.flushBuffer();
		this.responses.addHeaders(new MockHttpServletRequest(), committed, result);
		assertThat(committed.getHeaderNames()).isEmpty();
	}

	private static List<Object> strings(String body, String path) {
		List<?> values = JsonPath.read(body, path);
		return new ArrayList<>(values);
	}

	private String detail() throws Exception {
		return JsonPath.read(this.response.getContentAsString(), "$.detail");
	}

}
