package io.github.ratelimit.bucket;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Live overrides in this instance's memory: they apply to this instance only and end with
 * it (the in-memory store's limits are per instance too). {@link #compareAndSet} is the
 * Java twin of {@code live_limits_save.lua}.
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
	public @Nullable String read(String bucket) {
		return this.overrides.get(bucket);
	}

	@Override
	public synchronized boolean compareAndSet(String bucket, @Nullable String expected, @Nullable String override) {
		if (override != null && override.isEmpty()) {
			throw new IllegalArgumentException("override of bucket '" + bucket + "' must not be empty");
		}
		String stored = this.overrides.get(bucket);
		if (!Objects.equals(stored, expected)) {
			return false;
		}
		if (override == null) {
			this.overrides.remove(bucket);
		}
		else {
			this.overrides.put(bucket, override);
		}
		this.version.incrementAndGet();
		return true;
	}

	@Override
	public boolean shared() {
		return false;
	}

}
