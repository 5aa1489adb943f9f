package io.github.ratelimit.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.concurrency.ConcurrencyDecision;
import io.github.ratelimit.concurrency.ConcurrencyObserver;

/**
 * Counts what becomes of the permits of concurrency limits as
 * {@code ratelimit.concurrency}, tagged with the bucket and the event: {@code acquired},
 * {@code waited} (acquired after waiting), {@code rejected}, {@code released},
 * {@code released_late} (after the lease had ended), {@code expired} (leases found
 * expired and taken back), {@code lease_lost} (a renewal found the lease gone) and
 * {@code store_failure} (the failure mode decided, the store not answering).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class ConcurrencyMetrics implements ConcurrencyObserver, MeterBinder {

	private final Map<String, Counter> counters = new ConcurrentHashMap<>();

	private volatile @Nullable MeterRegistry registry;

	@Override
	public void bindTo(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void onAcquire(String bucket, ConcurrencyDecision decision, boolean waited) {
		count(bucket, decision.acquired() ? (waited ? "waited" : "acquired") : "rejected", 1);
		if (decision.expiredLeases() > 0) {
			count(bucket, "expired", decision.expiredLeases());
		}
	}

	@Override
	public void onRelease(String bucket, boolean held) {
		count(bucket, held ? "released" : "released_late", 1);
	}

	@Override
	public void onLeaseLost(String bucket) {
		count(bucket, "lease_lost", 1);
	}

	@Override
	public void onStoreFailure(String bucket) {
		count(bucket, "store_failure", 1);
	}

	private void count(String bucket, String event, long amount) {
		MeterRegistry registry = this.registry;
		if (registry == null) {
			return;
		}
		this.counters
			.computeIfAbsent(bucket + '\u0000' + event,
					(id) -> Counter.builder("ratelimit.concurrency")
						.description("What became of the permits of concurrency limits")
						.tag("bucket", bucket)
						.tag("event", event)
						.register(registry))
			.increment(amount);
	}

}
