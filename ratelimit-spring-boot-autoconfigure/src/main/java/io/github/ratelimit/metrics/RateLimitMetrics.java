package io.github.ratelimit.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.Decision;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.RateLimitObserver;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.status.StoreStatusSource;

/**
 * Micrometer meters: {@code ratelimit.decisions} (tags {@code bucket}, {@code outcome}:
 * one count per request, by its final {@link Outcome}),
 * {@code ratelimit.decisions.near.limit} (tag {@code bucket}: requests allowed with less
 * than a share of their limit remaining, a warning before rejections start),
 * {@code ratelimit.store.latency} (tag {@code store}: the store call that made each final
 * decision) and {@code ratelimit.store.degraded} (1 while the failure mode applies). Tags
 * are bounded: bucket names and outcomes, never the key.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitMetrics implements RateLimitObserver, MeterBinder {

	/** The default of {@code ratelimit.metrics.near-limit-share}. */
	public static final double DEFAULT_NEAR_LIMIT_SHARE = 0.1;

	/** Where a bucket's near-limit counter sits, after one counter per outcome. */
	private static final int NEAR_LIMIT = Outcome.values().length;

	private final StoreStatusSource status;

	private final double nearLimitShare;

	private final Map<String, Counter[]> counters = new ConcurrentHashMap<>();

	/** Per bucket: permits reserved, used and used beyond the reservation. */
	private final Map<String, Counter[]> settlements = new ConcurrentHashMap<>();

	/** {@code ratelimit.penalties} per bucket, registered on first use. */
	private final Map<String, Counter> penalties = new ConcurrentHashMap<>();

	private volatile @Nullable MeterRegistry registry;

	private volatile @Nullable Timer latency;

	/**
	 * Creates the meters; they are registered by {@link #bindTo(MeterRegistry)}.
	 * @param status the store's failure state
	 */
	public RateLimitMetrics(StoreStatusSource status) {
		this(status, DEFAULT_NEAR_LIMIT_SHARE);
	}

	/**
	 * Creates the meters; they are registered by {@link #bindTo(MeterRegistry)}.
	 * @param status the store's failure state
	 * @param nearLimitShare the share of its limit (0 to 1) that an allowed request
	 * leaves remaining below which it counts as near the limit; 0 for no such count
	 */
	public RateLimitMetrics(StoreStatusSource status, double nearLimitShare) {
		if (!(nearLimitShare >= 0 && nearLimitShare <= 1)) {
			throw new IllegalArgumentException("nearLimitShare must be between 0 and 1 but was " + nearLimitShare);
		}
		this.status = status;
		this.nearLimitShare = nearLimitShare;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.registry = registry;
		String store = this.status.status().store();
		this.latency = Timer.builder("ratelimit.store.latency")
			.description("Time the rate limit store took to decide")
			.tag("store", store)
			.register(registry);
		Gauge.builder("ratelimit.store.degraded", this.status, (source) -> source.status().degraded() ? 1 : 0)
			.description("1 while the rate limit store fails and the failure mode applies, 0 otherwise")
			.tag("store", store)
			.register(registry);
		FunctionCounter
			.builder("ratelimit.store.local.rejections", this.status, (source) -> source.status().localRejections())
			.description("Requests rejected without a store call, from a rejection the store had just made")
			.tag("store", store)
			.register(registry);
	}

	@Override
	public void onDecision(RateLimitResult result) {
		Counter[] counters = count(result.bucket().name(), result.outcome());
		if (counters != null && nearLimit(result)) {
			counters[NEAR_LIMIT].increment();
		}
		if (result.decision().penaltyStarted()) {
			penaltyStarted(result.bucket().name());
		}
		record(result.storeNanos());
	}

	/**
	 * Counts {@code ratelimit.penalties} (tagged with the bucket): rejections that
	 * blocked their key for a limit's penalty.
	 */
	private void penaltyStarted(String bucket) {
		MeterRegistry registry = this.registry;
		if (registry != null) {
			this.penalties
				.computeIfAbsent(bucket,
						(name) -> Counter.builder("ratelimit.penalties")
							.description("Rejections that blocked their key for the limit's penalty")
							.tag("bucket", name)
							.register(registry))
				.increment();
		}
	}

	/**
	 * Whether an allowed request left less than the near-limit share of its limit: of the
	 * limit with the fewest permits left, when there are several.
	 */
	private boolean nearLimit(RateLimitResult result) {
		Decision decision = result.decision();
		return decision.allowed() && decision.remaining() < this.nearLimitShare * decision.limit();
	}

	@Override
	public void onError(Bucket bucket, RuntimeException failure, long storeNanos) {
		count(bucket.name(), Outcome.ERROR);
		record(storeNanos);
	}

	/**
	 * Counts a settled reservation's permits: {@code ratelimit.permits.reserved} (its
	 * estimate), {@code ratelimit.permits.used} (what the call used) and
	 * {@code ratelimit.permits.excess} (used beyond the estimate: taken even past the
	 * limit) and {@code ratelimit.permits.owed} (the part of the excess that a limit did
	 * not have left: the key's debt), each tagged with the bucket.
	 */
	@Override
	public void onSettled(RateLimitResult reserved, long actual, long owed) {
		MeterRegistry registry = this.registry;
		if (registry == null) {
			return;
		}
		String bucket = reserved.bucket().name();
		Counter[] permits = this.settlements.computeIfAbsent(bucket, (name) -> new Counter[] {
				permits(registry, "ratelimit.permits.reserved", "Permits reserved by calls that settled", name),
				permits(registry, "ratelimit.permits.used", "Permits that calls which settled really used", name),
				permits(registry, "ratelimit.permits.excess",
						"Permits that calls used beyond their reservation, taken even past the limit", name),
				permits(registry, "ratelimit.permits.owed",
						"Permits used beyond a reservation that the limit did not have left: owed as debt", name) });
		long estimate = reserved.request().cost();
		permits[0].increment(estimate);
		permits[1].increment(actual);
		if (actual > estimate) {
			permits[2].increment(actual - estimate);
		}
		if (owed > 0) {
			permits[3].increment(owed);
		}
	}

	private static Counter permits(MeterRegistry registry, String name, String description, String bucket) {
		return Counter.builder(name)
			.description(description)
			.baseUnit("permits")
			.tag("bucket", bucket)
			.register(registry);
	}

	private void record(long nanos) {
		Timer timer = this.latency;
		if (timer != null && nanos >= 0) {
			timer.record(nanos, TimeUnit.NANOSECONDS);
		}
	}

	private Counter @Nullable [] count(String bucket, Outcome outcome) {
		MeterRegistry registry = this.registry;
		if (registry == null) {
			return null;
		}
		Counter[] byOutcome = this.counters.get(bucket);
		if (byOutcome == null) {
			byOutcome = this.counters.computeIfAbsent(bucket, (name) -> register(registry, name));
		}
		byOutcome[outcome.ordinal()].increment();
		return byOutcome;
	}

	private static Counter[] register(MeterRegistry registry, String bucket) {
		Outcome[] outcomes = Outcome.values();
		Counter[] counters = new Counter[outcomes.length + 1];
		for (Outcome outcome : outcomes) {
			counters[outcome.ordinal()] = Counter.builder("ratelimit.decisions")
				.description("Rate limit decisions by bucket and outcome")
				.tag("bucket", bucket)
				.tag("outcome", outcome.tagValue())
				.register(registry);
		}
		counters[NEAR_LIMIT] = Counter.builder("ratelimit.decisions.near.limit")
			.description("Rate limit decisions that allowed a request and left less than the near-limit share "
					+ "(ratelimit.metrics.near-limit-share) of its limit")
			.tag("bucket", bucket)
			.register(registry);
		return counters;
	}

}
