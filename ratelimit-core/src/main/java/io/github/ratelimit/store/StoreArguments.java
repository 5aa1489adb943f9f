package io.github.ratelimit.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.LimitSpec;

/**
 * The argument checks every {@link RateLimitStore} makes before touching its state, so
 * that bad input fails the same way in every store.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class StoreArguments {

	private StoreArguments() {
	}

	/**
	 * Checks the arguments of a decision or refund.
	 * @param bucket the bucket name
	 * @param key the key
	 * @param limits the limits
	 * @param cost the cost
	 * @throws IllegalArgumentException naming the first bad argument
	 */
	public static void check(String bucket, String key, List<LimitSpec> limits, long cost) {
		check(bucket, key, limits);
		if (cost < 1) {
			throw new IllegalArgumentException(
					"cost must be at least 1 but was " + cost + " (bucket '" + bucket + "')");
		}
	}

	/**
	 * Checks the arguments of a charge or restore: a cost per limit, none negative.
	 * @param bucket the bucket name
	 * @param key the key
	 * @param limits the limits
	 * @param costs the cost per limit
	 * @throws IllegalArgumentException naming the first bad argument
	 */
	public static void check(String bucket, String key, List<LimitSpec> limits, long[] costs) {
		check(bucket, key, limits);
		if (costs == null || costs.length != limits.size()) {
			throw new IllegalArgumentException("costs must have one cost per limit (" + limits.size() + ") but had "
					+ ((costs != null) ? costs.length : "none") + " (bucket '" + bucket + "')");
		}
		for (int i = 0; i < costs.length; i++) {
			if (costs[i] < 0) {
				throw new IllegalArgumentException(
						"costs[" + i + "] must not be negative but was " + costs[i] + " (bucket '" + bucket + "')");
			}
		}
	}

	/**
	 * Checks the arguments of an asynchronous decision, which reports bad input through
	 * the stage it returns rather than by throwing.
	 * @param <T> the stage's result type
	 * @param bucket the bucket name
	 * @param key the key
	 * @param limits the limits
	 * @param cost the cost
	 * @return a stage failed with the {@link IllegalArgumentException} naming the first
	 * bad argument, or {@code null} when the arguments are good
	 */
	public static <T> @Nullable CompletableFuture<T> failedIfInvalid(String bucket, String key, List<LimitSpec> limits,
			long cost) {
		try {
			check(bucket, key, limits, cost);
			return null;
		}
		catch (IllegalArgumentException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Checks the arguments of a peek or reset.
	 * @param bucket the bucket name
	 * @param key the key
	 * @param limits the limits
	 * @throws IllegalArgumentException naming the first bad argument
	 */
	public static void check(String bucket, String key, List<LimitSpec> limits) {
		check(bucket, key);
		if (limits == null || limits.isEmpty()) {
			throw new IllegalArgumentException("limits must not be empty (bucket '" + bucket + "')");
		}
		for (int i = 0; i < limits.size(); i++) {
			if (limits.get(i) == null) {
				throw new IllegalArgumentException("limits[" + i + "] must not be null (bucket '" + bucket + "')");
			}
		}
	}

	/**
	 * Checks the bucket and key of a store call.
	 * @param bucket the bucket name
	 * @param key the key
	 * @throws IllegalArgumentException naming the first bad argument
	 */
	public static void check(String bucket, String key) {
		if (bucket == null || bucket.isEmpty()) {
			throw new IllegalArgumentException("bucket must not be null or empty");
		}
		if (key == null) {
			throw new IllegalArgumentException("key must not be null (bucket '" + bucket + "')");
		}
	}

}
