package io.github.ratelimit.redis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.bucket.LiveLimitsStore;

/**
 * Live overrides of bucket limits in Redis, shared by every instance with the same key
 * prefix: a hash {@code {<prefix>}:live-limits} (bucket name to override) and a counter
 * {@code {<prefix>}:live-limits:version} that every change increments in the same script
 * ({@value #SCRIPT}), which saves a change only if the bucket's override is still the one
 * that was read (compare-and-set). Instances poll the counter, one {@code GET}, and read
 * the hash only when it moved. Neither key expires: an override lasts until it is
 * cleared, through restarts of the application and of Redis when Redis persists its data.
 * <p>
 * Works with any Spring Data Redis client; none of this is on the path of a decision.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisLiveLimitsStore implements LiveLimitsStore {

	/** The script that changes an override if it is still the one that was read. */
	public static final String SCRIPT = "META-INF/ratelimit/scripts/live_limits_save.lua";

	private static final RedisScript<Long> SAVE = RedisScript
		.of(new ClassPathResource(SCRIPT, RedisLiveLimitsStore.class.getClassLoader()), Long.class);

	private final StringRedisTemplate redis;

	private final List<String> keys;

	/**
	 * Creates the store.
	 * @param connectionFactory the application's Redis
	 * @param keyPrefix the key prefix ({@code ratelimit.key-prefix}), which namespaces
	 * the overrides as it does the limits
	 */
	public RedisLiveLimitsStore(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this.redis = new StringRedisTemplate(connectionFactory);
		String hash = "{" + keyPrefix + "}:live-limits";
		this.keys = List.of(hash, hash + ":version");
	}

	@Override
	public long version() {
		String version = this.redis.opsForValue().get(this.keys.get(1));
		return (version != null) ? Long.parseLong(version) : 0;
	}

	@Override
	public Map<String, String> load() {
		Map<String, String> overrides = new LinkedHashMap<>();
		this.redis.<String, String>opsForHash()
			.entries(this.keys.get(0))
			.forEach((bucket, override) -> overrides.put(bucket, override));
		return overrides;
	}

	@Override
	public @Nullable String read(String bucket) {
		return this.redis.<String, String>opsForHash().get(this.keys.get(0), bucket);
	}

	@Override
	public boolean compareAndSet(String bucket, @Nullable String expected, @Nullable String override) {
		if (override != null && override.isEmpty()) {
			throw new IllegalArgumentException("override of bucket '" + bucket + "' must not be empty");
		}
		// The script stands for "none" with an empty text, which no override has.
		Long version = this.redis.execute(SAVE, this.keys, bucket, (expected != null) ? expected : "",
				(override != null) ? override : "");
		return version != null && version > 0;
	}

	@Override
	public boolean shared() {
		return true;
	}

}
