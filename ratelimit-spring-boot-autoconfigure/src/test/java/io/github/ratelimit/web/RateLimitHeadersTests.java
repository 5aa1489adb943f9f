package io.github.ratelimit.web;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.spring.BucketDefinition;
import io.github.ratelimit.spring.Outcome;
import io.github.ratelimit.spring.RateLimitResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RateLimitHeaders}: formatting and accumulation per request.
 *
 * @author ratelimit-spring-boot-starter authors
 */
class RateLimitHeadersTests {

	private final MockHttpServletRequest request = new MockHttpServletRequest();

	private final MockHttpServletResponse response = new MockHttpServletResponse();

	private final RateLimitHeaders draft = new RateLimitHeaders(HeadersMode.DRAFT);

	@Test
	void windowAndResetShouldBeWholeSecondsRoundedUp() {
		LimitSpec spec = LimitSpec.of(3, "1500ms", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.request, this.response, allowed("b", "", spec, 2, 500_001));
		assertThat(this.response.getHeader(RateLimitHeaders.POLICY)).isEqualTo("\"b\";q=3;w=2");
		assertThat(this.response.getHeader(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"b\";r=2;t=1");
	}

	@Test
	void subSecondWindowShouldBeOneSecond() {
		LimitSpec spec = LimitSpec.of(5, "100ms", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.request, this.response, allowed("b", "", spec, 4, 20_000));
		assertThat(this.response.getHeader(RateLimitHeaders.POLICY)).isEqualTo("\"b\";q=5;w=1");
	}

	@Test
	void bucketNameShouldBeAValidStructuredFieldString() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.request, this.response, allowed("we\"ird\\näme\n", "", spec, 4, 1));
		assertThat(this.response.getHeader(RateLimitHeaders.POLICY)).isEqualTo("\"we\\\"ird\\\\n_me_\";q=5;w=60");
	}

	@Test
	void decisionsOfDifferentBucketsShouldBeOneMemberEachInOneField() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.request, this.response, allowed("a", "", spec, 4, 12_000_000));
		this.draft.add(this.request, this.response, allowed("b", "k", spec, 3, 24_000_000));
		assertThat(this.response.getHeaders(RateLimitHeaders.RATE_LIMIT))
			.containsExactly("\"a\";r=4;t=12, \"b\";r=3;t=24");
		assertThat(this.response.getHeaders(RateLimitHeaders.POLICY)).containsExactly("\"a\";q=5;w=60, \"b\";q=5;w=60");
	}

	@Test
	void theSameDecisionReportedTwiceShouldBeOneMember() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		RateLimitResult result = allowed("a", "k", spec, 4, 12_000_000);
		this.draft.add(this.request, this.response, result);
		this.draft.add(this.request, this.response, result);
		this.draft.addRejection(this.request, this.response, "a", result.decision());
		assertThat(this.response.getHeader(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"a\";r=4;t=12");
	}

	@Test
	void aRejectionAlreadyReportedShouldNotBeAddedAgainFromTheException() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		RateLimitResult rejected = rejected("a", "k", spec, 30_000_000);
		this.draft.add(this.request, this.response, rejected);
		// An aspect may wrap the decision in a new one; the bucket already has its
		// rejection.
		this.draft.addRejection(this.request, this.response, "a", Decision.rejected(spec, 0, 60_000_000, 30_000_000));
		assertThat(this.response.getHeader(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"a\";r=0;t=60");
	}

	@Test
	void aLaterDecisionForTheSameBucketAndKeyShouldReplaceTheEarlierOne() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.request, this.response, allowed("a", "k", spec, 4, 12_000_000));
		this.draft.add(this.request, this.response, allowed("a", "other", spec, 4, 12_000_000));
		this.draft.add(this.request, this.response, allowed("a", "k", spec, 3, 24_000_000));
		assertThat(this.response.getHeader(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"a\";r=3;t=24, \"a\";r=4;t=12");
		assertThat(this.response.getHeader(RateLimitHeaders.POLICY)).isEqualTo("\"a\";q=5;w=60");
	}

	@Test
	void oneBucketAtTwoLimitsShouldBeTwoQuotaMembers() {
		// A limitExpression gives two keys of one bucket different limits.
		this.draft.add(this.request, this.response,
				allowed("a", "k", LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET), 4, 12_000_000));
		this.draft.add(this.request, this.response,
				allowed("a", "other", LimitSpec.of(10, "1m", Algorithm.TOKEN_BUCKET), 9, 6_000_000));
		this.draft.add(this.request, this.response,
				allowed("a", "third", LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET), 3, 24_000_000));
		assertThat(this.response.getHeader(RateLimitHeaders.POLICY)).isEqualTo("\"a\";q=5;w=60, \"a\";q=10;w=60");
		assertThat(this.response.getHeader(RateLimitHeaders.RATE_LIMIT))
			.isEqualTo("\"a\";r=4;t=12, \"a\";r=9;t=6, \"a\";r=3;t=24");
	}

	@Test
	void membersShouldBeCappedPerRequest() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		for (int i = 0; i < RateLimitHeaders.MAX_DECISIONS + 10; i++) {
			this.draft.add(this.request, this.response, allowed("a", "k" + i, spec, 4, 1));
		}
		assertThat(this.response.getHeader(RateLimitHeaders.RATE_LIMIT).split(", "))
			.hasSize(RateLimitHeaders.MAX_DECISIONS);
	}

	@Test
	void shadowBucketShouldNotBeAdvertised() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		BucketDefinition shadow = WebTestSupport.shadowBucket("s", spec);
		this.draft.add(this.request, this.response, new RateLimitResult(shadow, "", shadow.limits(),
				Decision.rejected(spec, 0, 1, 1), Outcome.SHADOW_REJECTED));
		assertThat(this.response.getHeaderNames()).isEmpty();
	}

	@Test
	void committedResponseShouldBeLeftAlone() throws Exception {
		this.response.flushBuffer();
		this.draft.add(this.request, this.response,
				allowed("a", "", LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET), 4, 1));
		assertThat(this.response.getHeaderNames()).isEmpty();
	}

	@Test
	void legacyHeadersShouldDescribeTheLimitWithFewestPermitsLeft() {
		RateLimitHeaders legacy = new RateLimitHeaders(HeadersMode.LEGACY);
		legacy.add(this.request, this.response,
				allowed("a", "", LimitSpec.of(100, "1h", Algorithm.TOKEN_BUCKET), 7, 3_000_000_000L));
		legacy.add(this.request, this.response,
				allowed("b", "", LimitSpec.of(10, "1s", Algorithm.TOKEN_BUCKET), 9, 100_000));
		assertThat(this.response.getHeader(RateLimitHeaders.LEGACY_LIMIT)).isEqualTo("100");
		assertThat(this.response.getHeader(RateLimitHeaders.LEGACY_REMAINING)).isEqualTo("7");
		assertThat(this.response.getHeader(RateLimitHeaders.LEGACY_RESET)).isEqualTo("3000");
		assertThat(this.response.getHeaderNames()).doesNotContain(RateLimitHeaders.RATE_LIMIT);
	}

	@Test
	void legacyHeadersShouldDescribeTheRejectingLimit() {
		RateLimitHeaders legacy = new RateLimitHeaders(HeadersMode.LEGACY);
		legacy.add(this.request, this.response,
				allowed("a", "", LimitSpec.of(100, "1h", Algorithm.TOKEN_BUCKET), 0, 36_000_000));
		legacy.add(this.request, this.response,
				rejected("b", "", LimitSpec.of(10, "1s", Algorithm.TOKEN_BUCKET), 100_000));
		assertThat(this.response.getHeader(RateLimitHeaders.LEGACY_LIMIT)).isEqualTo("10");
		assertThat(this.response.getHeaders(RateLimitHeaders.LEGACY_LIMIT)).hasSize(1);
	}

	private static RateLimitResult allowed(String bucket, String key, LimitSpec spec, long remaining,
			long resetMicros) {
		BucketDefinition definition = WebTestSupport.bucket(bucket, spec);
		return new RateLimitResult(definition, key, List.of(spec), Decision.allowed(spec, remaining, resetMicros, 0),
				Outcome.ALLOWED);
	}

	private static RateLimitResult rejected(String bucket, String key, LimitSpec spec, long retryMicros) {
		BucketDefinition definition = WebTestSupport.bucket(bucket, spec);
		return new RateLimitResult(definition, key, List.of(spec),
				Decision.rejected(spec, 0, spec.windowMicros(), retryMicros), Outcome.REJECTED);
	}

}
