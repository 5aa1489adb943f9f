package io.github.ratelimit.redis;

/**
 * A call failed because the Redis Cluster master of its key's slot is down: its command
 * stayed unsent for the timeout, could not be sent, or the master was already known down;
 * or it was sent and the link to the master closed before the reply, when Redis may have
 * run it. Calls for other masters' slots are not affected. Not a Lettuce exception,
 * though only Lettuce raises it: the store checks for it on every client's path, and an
 * application on Jedis has no Lettuce classes.
 */
final class ClusterMasterDownException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final boolean mayHaveRun;

	/**
	 * Creates an exception for a call that was not sent.
	 * @param message what is down, naming the master
	 */
	ClusterMasterDownException(String message) {
		this(message, false);
	}

	/**
	 * Creates an exception.
	 * @param message what is down, naming the master
	 * @param mayHaveRun whether the call was sent before the link closed
	 */
	ClusterMasterDownException(String message, boolean mayHaveRun) {
		super(message);
		this.mayHaveRun = mayHaveRun;
	}

	/**
	 * Returns whether the call was sent before the link to the master closed: Redis may
	 * have run it, and no reply will tell.
	 */
	boolean mayHaveRun() {
		return this.mayHaveRun;
	}

}
