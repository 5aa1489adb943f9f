package io.github.ratelimit.concurrency;

/**
 * Keeps the permits of {@link ConcurrencyLimit}s: per bucket and key, who holds one and
 * until when. Each operation is one atomic step (on Redis, one script call), with the
 * store's clock deciding when a lease expires. Both stores of this library implement it
 * and pass the same contract suite.
 * <p>
 * A holder is a string unique across the fleet for each call (an instance id and a
 * sequence number): the store never makes one up, so a renewal or release names exactly
 * the permit it took.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public interface ConcurrencyStore {

	/**
	 * Takes a permit for {@code holder} when the key holds fewer than the limit's, after
	 * taking back the leases that expired.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limit the limit
	 * @param holder who takes it; taking again for a holder that holds one renews it
	 * @return the decision
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer
	 */
	ConcurrencyDecision acquire(String bucket, String key, ConcurrencyLimit limit, String holder);

	/**
	 * Extends a held permit's lease to a full lease from now.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param limit the limit, whose lease applies
	 * @param holder who holds it
	 * @return {@code false} when the holder no longer holds it: its lease expired (and
	 * another call may have its permit), or the key was released by an operator
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer
	 */
	boolean renew(String bucket, String key, ConcurrencyLimit limit, String holder);

	/**
	 * Gives a permit back.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @param holder who holds it
	 * @return {@code false} when the holder no longer held it (its lease had expired, or
	 * an operator released the key): nothing was given back
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer
	 */
	boolean release(String bucket, String key, String holder);

	/**
	 * Reads who holds the key's permits, taking nothing.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return the holders
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer
	 */
	Holders holders(String bucket, String key);

	/**
	 * Takes back every permit of the key (an operator's action): their holders learn it
	 * at their next renewal or release.
	 * @param bucket the bucket name
	 * @param key the key within the bucket
	 * @return the permits that were held
	 * @throws io.github.ratelimit.store.RateLimitStoreException when the store cannot
	 * answer
	 */
	int releaseAll(String bucket, String key);

}
