package io.github.ratelimit.concurrency;

/**
 * Who holds the permits of one key now.
 *
 * @param count the permits held (leases not yet expired)
 * @param nextExpiryMicros the time until the earliest lease expires unless renewed, 0
 * when none is held
 * @author ratelimit-spring-boot-starter authors
 */
public record Holders(int count, long nextExpiryMicros) {

	/** No permit held. */
	public static final Holders NONE = new Holders(0, 0);

}
