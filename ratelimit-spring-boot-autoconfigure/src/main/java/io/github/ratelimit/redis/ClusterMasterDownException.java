package io.github.ratelimit.redis;

import io.lettuce.core.RedisConnectionException;

/**
 * A call was not sent because the Redis Cluster master of its key's slot is down: its
 * command stayed unsent for the timeout, or the master was already known down. Calls for
 * other masters' slots are not affected.
 */
final class ClusterMasterDownException extends RedisConnectionException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what is down, naming the master
	 */
	ClusterMasterDownException(String message) {
		super(message);
	}

}
