package io.github.ratelimit.autoconfigure;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.autoconfigure.RateLimitProperties.Bucket;
import io.github.ratelimit.autoconfigure.RateLimitProperties.Limit;
import io.github.ratelimit.bucket.BucketSettings;
import io.github.ratelimit.bucket.LimitSettings;

/**
 * Turns {@code ratelimit.*} properties into the settings the {@code BucketRegistry}
 * merges.
 */
final class RateLimitSettingsMapper {

	private RateLimitSettingsMapper() {
	}

	static LimitSettings limit(Limit limit) {
		return new LimitSettings(limit.getAlgorithm(), limit.getLimit(), limit.getWindow(), limit.getBurst(),
				limit.getSegments(), limit.getPenalty(), limit.getCalendar(), limit.getZone());
	}

	static Map<String, BucketSettings> buckets(Map<String, Bucket> buckets) {
		Map<String, BucketSettings> settings = new LinkedHashMap<>();
		buckets.forEach((name, bucket) -> {
			List<LimitSettings> limits = bucket.getLimits().stream().map(RateLimitSettingsMapper::limit).toList();
			settings.put(name, new BucketSettings(limit(bucket), limits, bucket.getMode()));
		});
		return settings;
	}

}
