package io.github.ratelimit.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.RateLimiter;
import io.github.ratelimit.acquire.Acquirer;
import io.github.ratelimit.acquire.LimitMode;
import io.github.ratelimit.bucket.BucketDefinition;
import io.github.ratelimit.bucket.BucketRegistry;
import io.github.ratelimit.bucket.BucketSettings;
import io.github.ratelimit.bucket.BucketSource;
import io.github.ratelimit.bucket.InMemoryLiveLimitsStore;
import io.github.ratelimit.bucket.LimitSettings;
import io.github.ratelimit.bucket.LiveLimits;
import io.github.ratelimit.bucket.LiveLimits.ChangeRejectedException;
import io.github.ratelimit.bucket.LiveLimitsStore;
import io.github.ratelimit.bucket.RateLimiters;
import io.github.ratelimit.redis.RedisLiveLimitsStore;
import io.github.ratelimit.store.memory.InMemoryRateLimitStore;
import io.github.ratelimit.testsupport.redis.RedisServerExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Live limit changes ({@link LiveLimits}) on a {@link BucketRegistry} with the parser
 * configuration uses: what a change does to a bucket that code already holds, how it is
 * checked, how changes from other instances are applied, and which store the
 * auto-configuration picks.
 */
@ExtendWith(OutputCaptureExtension.class)
class LiveLimitsTests {

	@RegisterExtension
	static final RedisServerExtension redis = RedisServerExtension.standalone();

	private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");

	private final BucketRegistry registry = new BucketRegistry(
			new LimitSettings(Algorithm.TOKEN_BUCKET, 100L, Duration.ofMinutes(1), null, null),
			Map.of("api", bucket(limit(10, "10s")), "tiers",
					new BucketSettings(LimitSettings.NONE, List.of(limit(10, "1s"), limit(1000, "1h")), null), "later",
					bucket(limit(7, "1m"))));

	private final InMemoryLiveLimitsStore store = new InMemoryLiveLimitsStore();

	private final LiveLimits liveLimits = liveLimits(this.store, true);

	@Test
	void aChangeUpdatesTheBucketCodeHoldsAndClearingItBringsTheConfigurationBack() {
		BucketDefinition api = this.registry.register("api", LimitSettings.NONE, BucketSource.FILTER, "rule");
		this.liveLimits.set("api", Map.of("limit", "3"), "alice");
		assertThat(api.limits()).containsExactly(spec(3, "10s", Algorithm.TOKEN_BUCKET));
		assertThat(api.source()).isEqualTo(BucketSource.OVERRIDE);
		assertThat(api.override()).isNotNull();
		assertThat(api.override().changedBy()).isEqualTo("alice");
		assertThat(api.override().changedAt()).isEqualTo(NOW);
		assertThat(api.override().fields()).containsExactly(Map.entry("limit", "3"));
		this.liveLimits.clear("api", "bob");
		assertThat(api.limits()).containsExactly(spec(10, "10s", Algorithm.TOKEN_BUCKET));
		assertThat(api.source()).isEqualTo(BucketSource.CONFIGURATION);
		assertThat(api.override()).isNull();
	}

	@Test
	void changesAddUpUntilCleared() {
		this.liveLimits.set("api", Map.of("limit", "3"), "alice");
		this.liveLimits.set("api", Map.of("window", "1h", "algorithm", "sliding-log"), "alice");
		BucketDefinition api = this.registry.find("api");
		assertThat(api.limits()).containsExactly(spec(3, "1h", Algorithm.SLIDING_LOG));
		assertThat(api.override().fields()).containsOnlyKeys("limit", "window", "algorithm");
	}

	@Test
	void everyAppliedChangeIsLoggedWithWhoWhatAndTheLimitsBeforeAndAfter(CapturedOutput output) {
		// Nothing holds 'later' yet: the change is logged all the same.
		this.liveLimits.set("later", Map.of("limit", "2"), "alice");
		assertThat(output).contains("Live override of bucket 'later' by alice at 2026-11-23T12:00:00Z {limit=2}:"
				+ " limits [7/1m token-bucket] -> [2/1m token-bucket]");
		this.liveLimits.clear("later", "bob");
		assertThat(output).contains(
				"Live override of bucket 'later' cleared by bob: limits [2/1m token-bucket] -> [7/1m token-bucket]");
	}

	@Test
	void aClearAppliedByThePollFirstIsLoggedWithWhoClearedIt(CapturedOutput output) {
		// The poll (another thread on an instance with a shared store) can apply the
		// removal between the store's answer and the clearing thread's own refresh.
		LiveLimits[] polled = new LiveLimits[1];
		LiveLimitsStore store = new ForwardingStore(this.store) {

			@Override
			public boolean compareAndSet(String bucket, String expected, String override) {
				boolean saved = super.compareAndSet(bucket, expected, override);
				if (override == null) {
					polled[0].refresh();
				}
				return saved;
			}

		};
		LiveLimits liveLimits = liveLimits(store, true);
		polled[0] = liveLimits;
		liveLimits.set("later", Map.of("limit", "2"), "alice");
		liveLimits.clear("later", "bob");
		assertThat(output).contains(
				"Live override of bucket 'later' cleared by bob: limits [2/1m token-bucket] -> [7/1m token-bucket]");
		assertThat(this.registry.find("later").override()).isNull();
	}

	@Test
	void aLimiterHandedOutBeforeTheChangeDecidesWithTheNewLimits() {
		RateLimiters limiters = new RateLimiters(this.registry,
				Acquirer.builder(InMemoryRateLimitStore.create()).build());
		RateLimiter limiter = limiters.get("later");
		this.liveLimits.set("later", Map.of("limit", "1"), "alice");
		assertThat(limiter.tryAcquire("k").proceeds()).isTrue();
		assertThat(limiter.tryAcquire("k").proceeds()).isFalse();
		assertThat(limiter.bucket().limits().get(0).limit()).isEqualTo(1);
	}

	@Test
	void oneOfSeveralLimitsIsChangedByItsIndex() {
		this.liveLimits.set("tiers", Map.of("limits[1].limit", "500"), "alice");
		assertThat(this.registry.find("tiers").limits()).containsExactly(spec(10, "1s", Algorithm.TOKEN_BUCKET),
				spec(500, "1h", Algorithm.TOKEN_BUCKET));
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("tiers", Map.of("limit", "5"), "alice"))
			.withMessage("ratelimit.buckets.tiers.limits: the bucket has 2 limits (ratelimit.buckets.tiers.limits);"
					+ " say which one to change with 'index'");
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("tiers", Map.of("limits[2].limit", "5"), "alice"))
			.withMessage("ratelimit.buckets.tiers.limits[2]: the bucket has 2 limits, 'index' 0 to 1");
	}

	@Test
	void settingsAreCheckedAsConfigurationIsAndARejectedChangeChangesNothing() {
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("api", Map.of("burst", "0", "algorithm", "gcra"), "alice"))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(ChangeRejectedException.Reason.INVALID))
			.withMessage("ratelimit.buckets.api.burst: must be positive but was 0");
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("api", Map.of("segments", "1"), "alice"))
			.withMessage("ratelimit.buckets.api.segments: must be at least 2 but was 1");
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("api", Map.of("limit", "ten"), "alice"))
			.withMessage("ratelimit.buckets.api.limit: must be a whole number but was 'ten'");
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("api", Map.of("mode", "shadow"), "alice"))
			.withMessageStartingWith("ratelimit.buckets.api.mode: not a limit setting");
		assertThat(this.store.version()).isZero();
		assertThat(this.registry.find("api").limits()).containsExactly(spec(10, "10s", Algorithm.TOKEN_BUCKET));
	}

	@Test
	void writesAreRefusedUnlessEnabledButChangesFromElsewhereApply() {
		LiveLimits readOnly = liveLimits(this.store, false);
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> readOnly.set("api", Map.of("limit", "3"), "alice"))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(ChangeRejectedException.Reason.DISABLED))
			.withMessageContaining("ratelimit.endpoint.limits-write-enabled=true");
		assertThatExceptionOfType(ChangeRejectedException.class).isThrownBy(() -> readOnly.clear("api", "alice"));
		this.liveLimits.set("api", Map.of("limit", "3"), "alice");
		BucketRegistry other = new BucketRegistry(LimitSettings.NONE, Map.of("api", bucket(limit(10, "10s"))));
		new LiveLimits(other, this.store, new LiveLimitSettingsParser(), false, Clock.systemUTC()).refresh();
		assertThat(other.find("api").limits().get(0).limit()).isEqualTo(3);
	}

	@Test
	void anUnknownBucketIsRejected() {
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("nope", Map.of("limit", "3"), "alice"))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(ChangeRejectedException.Reason.UNKNOWN_BUCKET));
	}

	@Test
	void anOverrideOfABucketRegisteredLaterAppliesWhenItIsRegistered() {
		this.liveLimits.set("later", Map.of("limit", "2"), "alice");
		BucketDefinition later = this.registry.register("later", LimitSettings.NONE, BucketSource.ANNOTATION, "m()");
		assertThat(later.limits().get(0).limit()).isEqualTo(2);
		assertThat(later.source()).isEqualTo(BucketSource.OVERRIDE);
	}

	@Test
	void anOverrideThisInstanceCannotApplyLeavesTheBucketAsItWas() {
		BucketDefinition api = this.registry.register("api", LimitSettings.NONE, BucketSource.FILTER, "rule");
		// Written by another instance (another version of the application, or by hand).
		saveElsewhere("api", "by=alice&at=2026-11-23T12%3A00%3A00Z&f.window=-1s");
		saveElsewhere("later", "not an override");
		this.liveLimits.refresh();
		assertThat(api.limits()).containsExactly(spec(10, "10s", Algorithm.TOKEN_BUCKET));
		assertThat(api.source()).isEqualTo(BucketSource.CONFIGURATION);
		assertThat(this.registry.find("later").limits().get(0).limit()).isEqualTo(7);
	}

	@Test
	void aChangedLimitWinsOverALimitExpressionAndAChangedWindowDoesNot() {
		BucketDefinition plans = this.registry.register("plans", LimitSettings.NONE, BucketSource.ANNOTATION, "m()");
		assertThat(plans.limitConfigured()).isFalse();
		this.liveLimits.set("plans", Map.of("window", "1h"), "alice");
		assertThat(plans.limitConfigured()).isFalse();
		assertThat(plans.limitsWith(5)).containsExactly(spec(5, "1h", Algorithm.TOKEN_BUCKET));
		this.liveLimits.set("plans", Map.of("limit", "2"), "alice");
		assertThat(plans.limitConfigured()).isTrue();
	}

	@Test
	void aChangeTheStoreCannotSaveIsRejectedAndChangesNothing() {
		LiveLimitsStore down = new ForwardingStore(this.store) {

			@Override
			public boolean compareAndSet(String bucket, String expected, String override) {
				throw new IllegalStateException("Redis is down");
			}

		};
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> liveLimits(down, true).set("api", Map.of("limit", "3"), "alice"))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(ChangeRejectedException.Reason.UNAVAILABLE))
			.withMessageContaining("Redis is down");
		assertThat(this.registry.find("api").limits().get(0).limit()).isEqualTo(10);
	}

	@Test
	void aChangeAddsToTheChangeTheStoreHoldsNotToWhatThisInstanceLastRead() {
		this.liveLimits.set("api", Map.of("limit", "3"), "alice");
		// Another instance adds to it; this one has not polled since.
		BucketRegistry other = new BucketRegistry(LimitSettings.NONE, Map.of("api", bucket(limit(10, "10s"))));
		liveLimits(other, this.store, true).set("api", Map.of("burst", "5"), "bob");
		this.liveLimits.set("api", Map.of("window", "1m"), "alice");
		assertThat(this.registry.find("api").override().fields()).containsOnly(Map.entry("limit", "3"),
				Map.entry("burst", "5"), Map.entry("window", "1m"));
	}

	@Test
	void aChangeSavedElsewhereWhileThisOneIsMadeIsKept() {
		AtomicBoolean overtaken = new AtomicBoolean();
		LiveLimitsStore racing = new ForwardingStore(this.store) {

			@Override
			public boolean compareAndSet(String bucket, String expected, String override) {
				// Between this instance's read and its save.
				if (overtaken.compareAndSet(false, true)) {
					saveElsewhere(bucket, "by=bob&at=2026-11-23T11%3A59%3A59Z&f.burst=5");
				}
				return super.compareAndSet(bucket, expected, override);
			}

		};
		liveLimits(racing, true).set("api", Map.of("limit", "3"), "alice");
		assertThat(this.registry.find("api").override().fields()).containsOnly(Map.entry("burst", "5"),
				Map.entry("limit", "3"));
		assertThat(this.registry.find("api").override().changedBy()).isEqualTo("alice");
		assertThat(this.store.version()).isEqualTo(2);
	}

	@Test
	void aChangeThatOtherChangesKeepOvertakingIsRefusedAndChangesNothing() {
		AtomicInteger others = new AtomicInteger();
		LiveLimitsStore overtaken = new ForwardingStore(this.store) {

			@Override
			public boolean compareAndSet(String bucket, String expected, String override) {
				saveElsewhere(bucket, "by=bob&at=2026-11-23T11%3A59%3A59Z&f.burst=" + others.incrementAndGet());
				return super.compareAndSet(bucket, expected, override);
			}

		};
		LiveLimits liveLimits = liveLimits(overtaken, true);
		String message = "Other changes of bucket 'api' were saved first 10 times in a row while this one was being"
				+ " made; nothing changed. Send it again";
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> liveLimits.set("api", Map.of("limit", "3"), "alice"))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(ChangeRejectedException.Reason.CONTENDED))
			.withMessage(message);
		assertThat(this.store.read("api")).doesNotContain("f.limit");
		assertThatExceptionOfType(ChangeRejectedException.class).isThrownBy(() -> liveLimits.clear("api", "alice"))
			.withMessage(message);
		assertThat(this.store.read("api")).isNotNull();
	}

	@Test
	void aClearClearsTheChangeTheStoreHoldsAlsoOneThisInstanceHasNotRead() {
		saveElsewhere("api", "by=bob&at=2026-11-23T11%3A59%3A59Z&f.limit=3");
		BucketDefinition api = this.liveLimits.clear("api", "alice");
		assertThat(this.store.read("api")).isNull();
		assertThat(api.override()).isNull();
		assertThat(api.limits()).containsExactly(spec(10, "10s", Algorithm.TOKEN_BUCKET));
	}

	@Test
	void aStoredChangeThisInstanceCannotReadIsNotAddedToButCanBeCleared() {
		saveElsewhere("api", "by=bob&at=2026-11-23T11%3A59%3A59Z&f.mode=shadow");
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("api", Map.of("limit", "3"), "alice"))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(ChangeRejectedException.Reason.INVALID))
			.withMessageStartingWith("The change of bucket 'api' that the store holds cannot be read here"
					+ " (ratelimit.buckets.api.mode: not a limit setting")
			.withMessageEndingWith("); clear it (DELETE /actuator/ratelimits/api) and make the change again");
		assertThat(this.store.read("api")).endsWith("f.mode=shadow");
		this.liveLimits.clear("api", "alice");
		assertThat(this.store.read("api")).isNull();
	}

	@Test
	void aChangeThatAUserOfTheBucketCannotWorkWithIsRefusedWithTheUsersMessage(CapturedOutput output) {
		BucketDefinition api = this.registry.register("api", LimitSettings.NONE, BucketSource.ANNOTATION, "m()");
		this.registry.constrain("api", "m() (refundWhen)", (limits) -> {
			if (limits.stream().anyMatch((spec) -> spec.algorithm() == Algorithm.LEAKY_BUCKET)) {
				throw new IllegalStateException("m() gives permits back, which " + limits + " cannot take");
			}
		});
		assertThatExceptionOfType(ChangeRejectedException.class)
			.isThrownBy(() -> this.liveLimits.set("api", Map.of("algorithm", "leaky-bucket"), "alice"))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo(ChangeRejectedException.Reason.INVALID))
			.withMessage("m() gives permits back, which [10/10s leaky-bucket] cannot take");
		assertThat(this.store.version()).isZero();
		// Saved by an instance where nothing constrains the bucket: not applied here.
		saveElsewhere("api", "by=bob&at=2026-11-23T11%3A59%3A59Z&f.algorithm=leaky-bucket");
		this.liveLimits.refresh();
		assertThat(api.limits()).containsExactly(spec(10, "10s", Algorithm.TOKEN_BUCKET));
		assertThat(output).contains("Live override of bucket 'api' not applied (set by bob at 2026-11-23T11:59:59Z):"
				+ " m() gives permits back, which [10/10s leaky-bucket] cannot take; the limits stay [10/10s"
				+ " token-bucket]");
	}

	@Test
	void theRedisStoreIsSharedNamespacedByTheKeyPrefixAndPolled() {
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"ratelimit.buckets.api.limit=10", "ratelimit.endpoint.limits-write-enabled=true");
		runner.withPropertyValues("ratelimit.key-prefix=one").run((one) -> {
			assertThat(one).hasSingleBean(RedisLiveLimitsStore.class).hasSingleBean(RedisHeartbeat.class);
			assertThat(one.getBean(LiveLimits.class).shared()).isTrue();
			one.getBean(LiveLimits.class).set("api", Map.of("limit", "4"), "alice");
			runner.withPropertyValues("ratelimit.key-prefix=one").run((same) -> {
				same.getBean(LiveLimits.class).refresh();
				assertThat(same.getBean(BucketRegistry.class).find("api").limits().get(0).limit()).isEqualTo(4);
			});
			runner.withPropertyValues("ratelimit.key-prefix=two").run((other) -> {
				other.getBean(LiveLimits.class).refresh();
				assertThat(other.getBean(BucketRegistry.class).find("api").limits().get(0).limit()).isEqualTo(10);
			});
			one.getBean(LiveLimits.class).clear("api", "alice");
		});
	}

	@Test
	void theMemoryStoreAppliesToThisInstanceOnly() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasSingleBean(LiveLimits.class)
					.doesNotHaveBean(RedisLiveLimitsStore.class)
					.doesNotHaveBean(RedisHeartbeat.class);
				assertThat(context.getBean(LiveLimits.class).shared()).isFalse();
			});
	}

	/**
	 * Saves an override the way another instance does, unseen by this one until it polls.
	 */
	private void saveElsewhere(String bucket, String text) {
		assertThat(this.store.compareAndSet(bucket, this.store.read(bucket), text)).isTrue();
	}

	private LiveLimits liveLimits(LiveLimitsStore store, boolean writeEnabled) {
		return liveLimits(this.registry, store, writeEnabled);
	}

	private static LiveLimits liveLimits(BucketRegistry registry, LiveLimitsStore store) {
		return liveLimits(registry, store, false);
	}

	private static LiveLimits liveLimits(BucketRegistry registry, LiveLimitsStore store, boolean writeEnabled) {
		return new LiveLimits(registry, store, new LiveLimitSettingsParser(), writeEnabled,
				Clock.fixed(NOW, ZoneOffset.UTC));
	}

	private static BucketSettings bucket(LimitSettings limit) {
		return new BucketSettings(limit, List.of(), LimitMode.ENFORCE);
	}

	private static LimitSettings limit(long limit, String window) {
		return new LimitSettings(null, limit, io.github.ratelimit.Durations.parse(window), null, null);
	}

	private static LimitSpec spec(long limit, String window, Algorithm algorithm) {
		return LimitSpec.of(limit, window, algorithm);
	}

	/**
	 * A store that forwards to another, for tests to make one call fail.
	 */
	private static class ForwardingStore implements LiveLimitsStore {

		private final LiveLimitsStore store;

		ForwardingStore(LiveLimitsStore store) {
			this.store = store;
		}

		@Override
		public long version() {
			return this.store.version();
		}

		@Override
		public Map<String, String> load() {
			return new LinkedHashMap<>(this.store.load());
		}

		@Override
		public String read(String bucket) {
			return this.store.read(bucket);
		}

		@Override
		public boolean compareAndSet(String bucket, String expected, String override) {
			return this.store.compareAndSet(bucket, expected, override);
		}

		@Override
		public boolean shared() {
			return true;
		}

	}

}
