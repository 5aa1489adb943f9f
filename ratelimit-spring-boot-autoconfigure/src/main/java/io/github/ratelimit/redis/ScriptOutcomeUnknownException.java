package io.github.ratelimit.redis;

/**
 * A script call failed after it was sent to Redis (its connection was lost before the
 * reply came), so Redis may have run it: a decision may have taken permits there though
 * its caller never learnt of it.
 */
final class ScriptOutcomeUnknownException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	ScriptOutcomeUnknownException(Throwable cause) {
		super("Redis may have run the call: it failed after it was sent (" + cause.getMessage() + ")", cause);
	}

}
