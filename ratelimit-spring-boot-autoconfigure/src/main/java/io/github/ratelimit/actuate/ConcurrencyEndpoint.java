package io.github.ratelimit.actuate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import io.github.ratelimit.Durations;
import io.github.ratelimit.bucket.ConcurrencyLimiters;
import io.github.ratelimit.concurrency.ConcurrencyLimiter;
import io.github.ratelimit.concurrency.Holders;

/**
 * The {@code concurrency} actuator endpoint: every concurrency bucket with what became of
 * its permits, who holds one key's permits, and an operator's release of a key's permits
 * (for a call stuck on a dead downstream). Read-only unless
 * {@code management.endpoint.concurrency.access=unrestricted}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@Endpoint(id = ConcurrencyEndpoint.ID, defaultAccess = Access.READ_ONLY)
public class ConcurrencyEndpoint {

	/** The endpoint id. */
	public static final String ID = "concurrency";

	private final ConcurrencyLimiters limiters;

	private final ConcurrencyStatistics statistics;

	/**
	 * Creates the endpoint.
	 * @param limiters the limiters by bucket
	 * @param statistics the counts per bucket
	 */
	public ConcurrencyEndpoint(ConcurrencyLimiters limiters, ConcurrencyStatistics statistics) {
		this.limiters = limiters;
		this.statistics = statistics;
	}

	/**
	 * Lists every concurrency bucket: configured, or used since startup.
	 * @return the buckets, by name
	 */
	@ReadOperation
	public ConcurrencyDescriptor buckets() {
		List<BucketDescriptor> buckets = new ArrayList<>();
		for (Map.Entry<String, ConcurrencyLimiter> entry : new TreeMap<>(this.limiters.all()).entrySet()) {
			ConcurrencyStatistics.Counts counts = this.statistics.get(entry.getKey());
			ConcurrencyLimiter limiter = entry.getValue();
			buckets.add(new BucketDescriptor(entry.getKey(), limiter.limit().permits(),
					Durations.format(limiter.limit().lease()), counts.acquired(), counts.waited(), counts.rejected(),
					counts.released(), counts.releasedLate(), counts.expired(), counts.leasesLost(),
					counts.storeFailures()));
		}
		return new ConcurrencyDescriptor(buckets);
	}

	/**
	 * Reads who holds one key's permits, taking none.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return the holders, or {@code null} (404) for an unknown bucket
	 */
	@ReadOperation
	public @Nullable HoldersDescriptor holders(@Selector String bucket, @Selector String key) {
		ConcurrencyLimiter limiter = this.limiters.find(bucket);
		if (limiter == null) {
			return null;
		}
		Holders holders = limiter.holders(key);
		return new HoldersDescriptor(bucket, key, limiter.limit().permits(), holders.count(),
				Math.max(0, limiter.limit().permits() - holders.count()), holders.nextExpiryMicros() / 1000);
	}

	/**
	 * Takes back every permit of one key. Their calls go on; they learn it at their next
	 * renewal or release, and new calls may take the permits at once.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return the permits that were held, or {@code null} (404) for an unknown bucket
	 */
	@DeleteOperation
	public @Nullable ReleasedDescriptor release(@Selector String bucket, @Selector String key) {
		ConcurrencyLimiter limiter = this.limiters.find(bucket);
		if (limiter == null) {
			return null;
		}
		return new ReleasedDescriptor(bucket, key, limiter.releaseAll(key));
	}

	/**
	 * The concurrency buckets.
	 *
	 * @param buckets each bucket
	 */
	public record ConcurrencyDescriptor(List<BucketDescriptor> buckets) {
	}

	/**
	 * One concurrency bucket; the counts are this instance's since startup.
	 *
	 * @param name the bucket name
	 * @param permits the calls a key may have in flight
	 * @param lease how long a permit is held without a renewal
	 * @param acquired permits taken at once
	 * @param waited permits taken after waiting
	 * @param rejected requests rejected (after any wait)
	 * @param released permits given back while held
	 * @param releasedLate permits given back after their lease had ended
	 * @param expired leases found expired and taken back (their holder died or froze)
	 * @param leasesLost leases of this instance's calls that a renewal found gone
	 * @param storeFailures requests the failure mode decided, the store not answering
	 */
	public record BucketDescriptor(String name, int permits, String lease, long acquired, long waited, long rejected,
			long released, long releasedLate, long expired, long leasesLost, long storeFailures) {
	}

	/**
	 * Who holds one key's permits.
	 *
	 * @param bucket the bucket name
	 * @param key the key
	 * @param permits the calls the key may have in flight
	 * @param inFlight the permits held now, on every instance
	 * @param remaining the permits free
	 * @param nextLeaseEndMillis the time until the earliest lease ends unless renewed; 0
	 * when none is held
	 */
	public record HoldersDescriptor(String bucket, String key, int permits, int inFlight, int remaining,
			long nextLeaseEndMillis) {
	}

	/**
	 * An operator's release of a key's permits.
	 *
	 * @param bucket the bucket name
	 * @param key the key
	 * @param released the permits that were held
	 */
	public record ReleasedDescriptor(String bucket, String key, int released) {
	}

}
