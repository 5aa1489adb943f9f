package io.github.ratelimit.web;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.PermitRequest;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.concurrency.ConcurrencyLimit;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.ConcurrencyPermit;
import io.github.ratelimit.concurrency.InMemoryConcurrencyStore;
import io.github.ratelimit.concurrency.LeaseRenewer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RateLimitHeaders}: formatting and accumulation per request, on no
 * particular request stack (the header fields go to a map).
 *
 * @author ratelimit-spring-boot-starter authors
 */
class RateLimitHeadersTests {

	private final ResponseLimits limits = new ResponseLimits();

	private final Map<String, String> headers = new LinkedHashMap<>();

	private final RateLimitHeaders draft = new RateLimitHeaders(HeadersMode.DRAFT);

	@Test
	void windowAndResetShouldBeWholeSecondsRoundedUp() {
		LimitSpec spec = LimitSpec.of(3, "1500ms", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.limits, allowed("b", "", spec, 2, 500_001), this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.POLICY)).isEqualTo("\"b\";q=3;w=2");
		assertThat(this.headers.get(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"b\";r=2;t=1");
	}

	@Test
	void aConcurrencyLimitIsAPolicyOfConcurrentRequestsWithoutWindowOrReset() {
		try (LeaseRenewer renewer = new LeaseRenewer()) {
			ConcurrencyLimiter exports = new ConcurrencyLimiter(new InMemoryConcurrencyStore(), "exports",
					new ConcurrencyLimit(5, Duration.ofSeconds(30)), renewer, List.of());
			ConcurrencyPermit permit = exports.tryAcquire("t1");
			this.draft.addInFlight(this.limits, permit, this.headers::put);
			assertThat(this.headers.get(RateLimitHeaders.POLICY))
				.isEqualTo("\"exports\";q=5;qu=\"concurrent-requests\"");
			assertThat(this.headers.get(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"exports\";r=4");
			permit.release();
		}
	}

	@Test
	void aBucketsConcurrencyLimitIsAdvertisedApartFromItsRateLimit() {
		try (LeaseRenewer renewer = new LeaseRenewer()) {
			ConcurrencyLimiter reports = new ConcurrencyLimiter(new InMemoryConcurrencyStore(), "reports",
					new ConcurrencyLimit(2, Duration.ofSeconds(30)), renewer, List.of());
			ConcurrencyPermit permit = reports.tryAcquire("k");
			this.draft.addInFlight(this.limits, permit, this.headers::put);
			LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
			this.draft.add(this.limits, allowed("reports", "k", spec, 4, 12_000_000), this.headers::put);
			// Neither replaces the other: two counters of one bucket and key.
			assertThat(this.headers)
				.containsEntry(RateLimitHeaders.POLICY,
						"\"reports-concurrency\";q=2;qu=\"concurrent-requests\", \"reports\";q=5;w=60")
				.containsEntry(RateLimitHeaders.RATE_LIMIT, "\"reports-concurrency\";r=1, \"reports\";r=4;t=12");
			permit.release();
		}
	}

	@Test
	void subSecondWindowShouldBeOneSecond() {
		LimitSpec spec = LimitSpec.of(5, "100ms", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.limits, allowed("b", "", spec, 4, 20_000), this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.POLICY)).isEqualTo("\"b\";q=5;w=1");
	}

	@Test
	void bucketNameShouldBeAValidStructuredFieldString() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.limits, allowed("we\"ird\\näme\n", "", spec, 4, 1), this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.POLICY)).isEqualTo("\"we\\\"ird\\\\n_me_\";q=5;w=60");
	}

	@Test
	void decisionsOfDifferentBucketsShouldBeOneMemberEachInOneField() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.limits, allowed("a", "", spec, 4, 12_000_000), this.headers::put);
		this.draft.add(this.limits, allowed("b", "k", spec, 3, 24_000_000), this.headers::put);
		assertThat(this.headers).containsEntry(RateLimitHeaders.RATE_LIMIT, "\"a\";r=4;t=12, \"b\";r=3;t=24")
			.containsEntry(RateLimitHeaders.POLICY, "\"a\";q=5;w=60, \"b\";q=5;w=60");
	}

	@Test
	void theSameDecisionReportedTwiceShouldBeOneMember() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		RateLimitResult result = allowed("a", "k", spec, 4, 12_000_000);
		this.draft.add(this.limits, result, this.headers::put);
		this.draft.add(this.limits, result, this.headers::put);
		this.draft.addRejection(this.limits, "a", result.decision(), this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"a\";r=4;t=12");
	}

	@Test
	void aRejectionAlreadyReportedShouldNotBeAddedAgainFromTheException() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		RateLimitResult rejected = rejected("a", "k", spec, 30_000_000);
		this.draft.add(this.limits, rejected, this.headers::put);
		// An aspect may wrap the decision in a new one; the bucket already has its
		// rejection.
		this.draft.addRejection(this.limits, "a", Decision.rejected(spec, 0, 60_000_000, 30_000_000),
				this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"a\";r=0;t=60");
	}

	@Test
	void aLaterDecisionForTheSameBucketAndKeyShouldReplaceTheEarlierOne() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		this.draft.add(this.limits, allowed("a", "k", spec, 4, 12_000_000), this.headers::put);
		this.draft.add(this.limits, allowed("a", "other", spec, 4, 12_000_000), this.headers::put);
		this.draft.add(this.limits, allowed("a", "k", spec, 3, 24_000_000), this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.RATE_LIMIT)).isEqualTo("\"a\";r=3;t=24, \"a\";r=4;t=12");
		assertThat(this.headers.get(RateLimitHeaders.POLICY)).isEqualTo("\"a\";q=5;w=60");
	}

	@Test
	void oneBucketAtTwoLimitsShouldBeTwoQuotaMembers() {
		// A limitExpression gives two keys of one bucket different limits.
		this.draft.add(this.limits, allowed("a", "k", LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET), 4, 12_000_000),
				this.headers::put);
		this.draft.add(this.limits, allowed("a", "other", LimitSpec.of(10, "1m", Algorithm.TOKEN_BUCKET), 9, 6_000_000),
				this.headers::put);
		this.draft.add(this.limits, allowed("a", "third", LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET), 3, 24_000_000),
				this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.POLICY)).isEqualTo("\"a\";q=5;w=60, \"a\";q=10;w=60");
		assertThat(this.headers.get(RateLimitHeaders.RATE_LIMIT))
			.isEqualTo("\"a\";r=4;t=12, \"a\";r=9;t=6, \"a\";r=3;t=24");
	}

	@Test
	void membersShouldBeCappedPerRequest() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		for (int i = 0; i < RateLimitHeaders.MAX_DECISIONS + 10; i++) {
			this.draft.add(this.limits, allowed("a", "k" + i, spec, 4, 1), this.headers::put);
		}
		assertThat(this.headers.get(RateLimitHeaders.RATE_LIMIT).split(", ")).hasSize(RateLimitHeaders.MAX_DECISIONS);
	}

	@Test
	void shadowBucketShouldNotBeAdvertised() {
		LimitSpec spec = LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET);
		Bucket shadow = new Bucket("s", List.of(spec), LimitMode.SHADOW);
		this.draft.add(this.limits, new RateLimitResult(PermitRequest.of(shadow, "", 1),
				Decision.rejected(spec, 0, 1, 1), Outcome.SHADOW_REJECTED, -1), this.headers::put);
		assertThat(this.headers).isEmpty();
	}

	@Test
	void noneShouldWriteNothing() {
		new RateLimitHeaders(HeadersMode.NONE).add(this.limits,
				allowed("a", "", LimitSpec.of(5, "1m", Algorithm.TOKEN_BUCKET), 4, 1), this.headers::put);
		assertThat(this.headers).isEmpty();
	}

	@Test
	void legacyHeadersShouldDescribeTheLimitWithFewestPermitsLeft() {
		RateLimitHeaders legacy = new RateLimitHeaders(HeadersMode.LEGACY);
		legacy.add(this.limits, allowed("a", "", LimitSpec.of(100, "1h", Algorithm.TOKEN_BUCKET), 7, 3_000_000_000L),
				this.headers::put);
		legacy.add(this.limits, allowed("b", "", LimitSpec.of(10, "1s", Algorithm.TOKEN_BUCKET), 9, 100_000),
				this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.LEGACY_LIMIT)).isEqualTo("100");
		assertThat(this.headers.get(RateLimitHeaders.LEGACY_REMAINING)).isEqualTo("7");
		assertThat(this.headers.get(RateLimitHeaders.LEGACY_RESET)).isEqualTo("3000");
		assertThat(this.headers).doesNotContainKey(RateLimitHeaders.RATE_LIMIT);
	}

	@Test
	void legacyHeadersShouldDescribeTheRejectingLimit() {
		RateLimitHeaders legacy = new RateLimitHeaders(HeadersMode.LEGACY);
		legacy.add(this.limits, allowed("a", "", LimitSpec.of(100, "1h", Algorithm.TOKEN_BUCKET), 0, 36_000_000),
				this.headers::put);
		legacy.add(this.limits, rejected("b", "", LimitSpec.of(10, "1s", Algorithm.TOKEN_BUCKET), 100_000),
				this.headers::put);
		assertThat(this.headers.get(RateLimitHeaders.LEGACY_LIMIT)).isEqualTo("10");
	}

	private static RateLimitResult allowed(String bucket, String key, LimitSpec spec, long remaining,
			long resetMicros) {
		return new RateLimitResult(PermitRequest.of(Bucket.of(bucket, spec), key, 1),
				Decision.allowed(spec, remaining, resetMicros, 0), Outcome.ALLOWED, -1);
	}

	private static RateLimitResult rejected(String bucket, String key, LimitSpec spec, long retryMicros) {
		return new RateLimitResult(PermitRequest.of(Bucket.of(bucket, spec), key, 1),
				Decision.rejected(spec, 0, spec.windowMicros(), retryMicros), Outcome.REJECTED, -1);
	}

}
