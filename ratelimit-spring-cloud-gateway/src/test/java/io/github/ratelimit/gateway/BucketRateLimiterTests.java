package io.github.ratelimit.gateway;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.ManualTimeSource;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.acquire.ManualWaiter;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSettings;
import io.github.ratelimit.bucket.LimitOverride;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreUnavailableException;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.HeadersMode;
import io.github.ratelimit.web.RateLimitHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link BucketRateLimiter} on its own: route arguments, decisions and headers, failures,
 * and leaky bucket delays that wait on a timer, not on the calling thread.
 */
class BucketRateLimiterTests {

	private final ManualTimeSource clock = new ManualTimeSource(3_600_000_000L);

	private final ManualWaiter waiter = new ManualWaiter(this.clock);

	private final BucketRegistry registry = new BucketRegistry(LimitSettings.NONE,
			Map.of("api", bucket(Algorithm.FIXED_WINDOW, 3, Duration.ofHours(1), null), "shaped",
					new BucketSettings(new LimitSettings(Algorithm.LEAKY_BUCKET, 1L, Duration.ofSeconds(1), 3L, null),
							List.of(), null),
					"trial", bucket(Algorithm.TOKEN_BUCKET, 1, Duration.ofHours(1), LimitMode.SHADOW), "orders",
					bucket(Algorithm.GCRA, 1, Duration.ofHours(1), null)));

	private final ConfigurationService configurationService = new ConfigurationService(new DefaultListableBeanFactory(),
			DefaultConversionService::getSharedInstance, () -> null);

	private BucketRateLimiter limiter = limiter(HeadersMode.DRAFT,
			InMemoryRateLimitStore.builder().timeSource(this.clock).build());

	@Test
	void aRouteTakesItsCostFromTheBucketItNames() {
		route("items", Map.of("ratelimit.bucket", "api", "ratelimit.cost", "2"));
		Response response = isAllowed("items", "alice");
		assertThat(response.isAllowed()).isTrue();
		assertThat(response.getHeaders()).containsEntry("RateLimit-Policy", "\"api\";q=3;w=3600")
			.containsEntry("RateLimit", "\"api\";r=1;t=3600")
			.doesNotContainKey("Retry-After");
	}

	@Test
	void aRouteDecidesWithLimitsChangedAtRuntime() {
		route("items", Map.of("ratelimit.bucket", "api"));
		assertThat(isAllowed("items", "alice").isAllowed()).isTrue();
		LimitSettings one = new LimitSettings(null, 1L, null, null, null);
		this.registry.override(Map.of("api", new LimitOverride(Map.of("limit", "1"),
				new BucketSettings(one, List.of(), null), "alice", Instant.EPOCH)));
		Response rejected = isAllowed("items", "alice");
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.getHeaders()).containsEntry("RateLimit-Policy", "\"api\";q=1;w=3600");
	}

	@Test
	void aRejectionIsNotAllowedAndSaysWhenToRetry() {
		route("items", Map.of("ratelimit.bucket", "api"));
		for (int i = 0; i < 3; i++) {
			assertThat(isAllowed("items", "alice").isAllowed()).isTrue();
		}
		Response rejected = isAllowed("items", "alice");
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.getHeaders()).containsEntry("RateLimit", "\"api\";r=0;t=3600")
			.containsEntry("Retry-After", "3600");
		assertThat(isAllowed("items", "bob").isAllowed()).isTrue();
	}

	@Test
	void aCostNoWaitCanMeetGetsNoRetryAfter() {
		route("items", Map.of("ratelimit.bucket", "api", "ratelimit.cost", "4"));
		Response rejected = isAllowed("items", "alice");
		assertThat(rejected.isAllowed()).isFalse();
		assertThat(rejected.getHeaders()).doesNotContainKey("Retry-After").containsKey("RateLimit");
	}

	@Test
	void aRouteWithoutArgumentsUsesTheBucketNamedLikeIt() {
		assertThat(isAllowed("orders", "alice").getHeaders()).containsEntry("RateLimit-Policy",
				"\"orders\";q=1;w=3600");
		assertThat(isAllowed("orders", "alice").isAllowed()).isFalse();
	}

	@Test
	void aBucketNoConfigurationDefinesRejectsTheRouteNamingTheFix() {
		assertThatExceptionOfType(InvalidRouteException.class)
			.isThrownBy(() -> route("items", Map.of("ratelimit.bucket", "apu")))
			.withMessageContaining("Route 'items'")
			.withMessageContaining("bucket 'apu'")
			.withMessageContaining("ratelimit.buckets.apu.limit");
	}

	@Test
	void aRouteWithoutArgumentsOrBucketFailsItsRequestsNamingTheFix() {
		assertThat(this.limiter.isAllowed("search", "alice").toFuture()).failsWithin(Duration.ofSeconds(5))
			.withThrowableThat()
			.havingRootCause()
			.isInstanceOf(InvalidRouteException.class)
			.withMessageContaining("Route 'search'")
			.withMessageContaining("ratelimit.buckets.search");
	}

	@Test
	void aCostBelowOneRejectsTheRoute() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> route("items", Map.of("ratelimit.bucket", "api", "ratelimit.cost", "0")))
			.withMessageStartingWith(
					"Route 'items': RequestRateLimiter argument ratelimit.cost must be at least 1 but was 0.");
	}

	@Test
	void argumentsOfOtherLimitersAreNotOurs() {
		route("orders", Map.of("redis-rate-limiter.replenishRate", "10"));
		assertThat(this.limiter.getConfig()).doesNotContainKey("orders");
	}

	@Test
	void aShadowBucketLetsEveryRequestThroughWithoutHeaders() {
		route("trial", Map.of("ratelimit.bucket", "trial"));
		for (int i = 0; i < 3; i++) {
			Response response = isAllowed("trial", "alice");
			assertThat(response.isAllowed()).isTrue();
			assertThat(response.getHeaders()).isEmpty();
		}
	}

	@Test
	void theHeadersModeIsTheConfiguredOne() {
		this.limiter = limiter(HeadersMode.LEGACY, InMemoryRateLimitStore.builder().timeSource(this.clock).build());
		route("items", Map.of("ratelimit.bucket", "api"));
		assertThat(isAllowed("items", "alice").getHeaders()).containsOnlyKeys("X-RateLimit-Limit",
				"X-RateLimit-Remaining", "X-RateLimit-Reset");
	}

	@Test
	void aLeakyBucketDelayWaitsOnATimerNotOnTheCallingThread() {
		route("shaped", Map.of("ratelimit.bucket", "shaped"));
		assertThat(isAllowed("shaped", "alice").isAllowed()).isTrue();
		CompletableFuture<Response> second = this.limiter.isAllowed("shaped", "alice").toFuture();
		assertThat(second).isNotDone();
		assertThat(this.waiter.pendingDelays()).hasSize(1);
		this.waiter.releaseNext();
		assertThat(second).isCompleted();
		assertThat(second.join().isAllowed()).isTrue();
	}

	@Test
	void aStoreThatCannotDecideInClosedModeIsServiceUnavailable() {
		this.limiter = limiter(HeadersMode.DRAFT, new UnavailableStore());
		route("items", Map.of("ratelimit.bucket", "api"));
		assertThat(this.limiter.isAllowed("items", "alice").toFuture()).failsWithin(Duration.ofSeconds(5))
			.withThrowableThat()
			.havingCause()
			.isInstanceOfSatisfying(ResponseStatusException.class,
					(ex) -> assertThat(ex.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE));
	}

	private BucketRateLimiter limiter(HeadersMode mode, RateLimitStore store) {
		Acquirer acquirer = Acquirer.builder(store).waiter(this.waiter).build();
		return new BucketRateLimiter(this.registry, acquirer, new RateLimitHeaders(mode), this.configurationService);
	}

	private void route(String routeId, Map<String, Object> args) {
		this.limiter.onApplicationEvent(new FilterArgsEvent(this, routeId, args));
	}

	private Response isAllowed(String routeId, String key) {
		CompletableFuture<Response> response = this.limiter.isAllowed(routeId, key).toFuture();
		assertThat(response).as("decided without waiting").isCompleted();
		return response.join();
	}

	private static BucketSettings bucket(Algorithm algorithm, long limit, Duration window, LimitMode mode) {
		return new BucketSettings(new LimitSettings(algorithm, limit, window, null, null), List.of(), mode);
	}

	/**
	 * A store that cannot decide, as the failover store is with
	 * {@code ratelimit.failure-mode=closed} while Redis fails.
	 */
	private static final class UnavailableStore implements RateLimitStore {

		@Override
		public Decision decide(String bucket, String key, List<LimitSpec> limits, long cost, long maxDelayMicros) {
			throw new StoreUnavailableException("Redis is down", null);
		}

		@Override
		public void refund(String bucket, String key, List<LimitSpec> limits, long cost) {
		}

		@Override
		public Decision peek(String bucket, String key, List<LimitSpec> limits) {
			throw new StoreUnavailableException("Redis is down", null);
		}

		@Override
		public void reset(String bucket, String key, List<LimitSpec> limits) {
		}

		@Override
		public String name() {
			return "unavailable";
		}

	}

}
