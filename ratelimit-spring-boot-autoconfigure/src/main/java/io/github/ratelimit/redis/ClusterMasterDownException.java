package io.github.ratelimit.redis;

/**
 * A call was not sent because the Redis Cluster master of its key's slot is down: its
 * command stayed unsent for the timeout, or the master was already known down. Calls for
 * other masters' slots are not affected. Not a Lettuce exception, though only Lettuce
 * raises it: the store checks for it on every client's path, and an application on Jedis
 * has no Lettuce classes.
 */
final class ClusterMasterDownException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what is down, naming the master
	 */
	ClusterMasterDownException(String message) {
		super(message);
	}

}
