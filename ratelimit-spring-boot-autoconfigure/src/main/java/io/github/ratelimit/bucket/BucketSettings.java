package io.github.ratelimit.bucket;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.acquire.LimitMode;

/**
 * What configuration ({@code ratelimit.buckets.<name>}) says about one bucket.
 *
 * @param limit the single limit's settings (also the fallback of each entry of
 * {@code limits})
 * @param limits several limits, all enforced; empty for a single limit
 * @param mode enforce or shadow, or {@code null} for enforce
 * @author ratelimit-spring-boot-starter authors
 */
public record BucketSettings(LimitSettings limit, List<LimitSettings> limits, @Nullable LimitMode mode) {

	/** A bucket that configuration says nothing about. */
	public static final BucketSettings NONE = new BucketSettings(LimitSettings.NONE, List.of(), null);

}
