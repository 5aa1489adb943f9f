package io.github.ratelimit.bucket;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Live overrides in this instance's memory: they apply to this instance only and end with
 * it (the in-memory store's limits are per instance too).
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class InMemoryLiveLimitsStore implements LiveLimitsStore {

	private final Map<String, String> overrides = new ConcurrentHashMap<>();

	private final AtomicLong version = new AtomicLong();

	@Override
	public long version() {
		return this.version.get();
	}

	@Override
	public Map<String, String> load() {
		return Map.copyOf(this.overrides);
	}

	@Override
	public void save(String bucket, String override) {
		this.overrides.put(bucket, override);
		this.version.incrementAndGet();
	}

	@Override
	public void remove(String bucket) {
		this.overrides.remove(bucket);
		this.version.incrementAndGet();
	}

	@Override
	public boolean shared() {
		return false;
	}

}
