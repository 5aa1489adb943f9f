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

import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.acquire.Outcome;
import io.github.ratelimit.acquire.RateLimitObserver;
import io.github.ratelimit.acquire.RateLimitResult;
import io.github.ratelimit.status.StoreStatusSource;

/**
 * Micrometer meters: {@code ratelimit.decisions} (tags {@code bucket}, {@code outcome}:
 * one count per request, by its final {@link Outcome}), {@code ratelimit.store.latency}
 * (tag {@code store}: the store call that made each final decision) and
 * {@code ratelimit.store.degraded} (1 while the failure mode applies). Tags are bounded:
 * bucket names and outcomes, never the key.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RateLimitMetrics implements RateLimitObserver, MeterBinder {

	private final StoreStatusSource status;

	private final Map<String, Counter[]> counters = new ConcurrentHashMap<>();

	private volatile @Nullable MeterRegistry registry;

	private volatile @Nullable Timer latency;

	/**
	 * Creates the meters; they are registered by {@link #bindTo(MeterRegistry)}.
	 * @param status the store's failure state
	 */
	public RateLimitMetrics(StoreStatusSource status) {
		this.status = status;
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
		count(result.bucket().name(), result.outcome());
		record(result.storeNanos());
	}

	@Override
	public void onError(Bucket bucket, RuntimeException failure, long storeNanos) {
		count(bucket.name(), Outcome.ERROR);
		record(storeNanos);
	}

	private void record(long nanos) {
		Timer timer = this.latency;
		if (timer != null && nanos >= 0) {
			timer.record(nanos, TimeUnit.NANOSECONDS);
		}
	}

	private void count(String bucket, Outcome outcome) {
		MeterRegistry registry = this.registry;
		if (registry == null) {
			return;
		}
		Counter[] byOutcome = this.counters.get(bucket);
		if (byOutcome == null) {
			byOutcome = this.counters.computeIfAbsent(bucket, (name) -> register(registry, name));
		}
		byOutcome[outcome.ordinal()].increment();
	}

	private static Counter[] register(MeterRegistry registry, String bucket) {
		Outcome[] outcomes = Outcome.values();
		Counter[] counters = new Counter[outcomes.length];
		for (Outcome outcome : outcomes) {
			counters[outcome.ordinal()] = Counter.builder("ratelimit.decisions")
				.description("Rate limit decisions by bucket and outcome")
				.tag("bucket", bucket)
				.tag("outcome", outcome.tagValue())
				.register(registry);
		}
		return counters;
	}

}
