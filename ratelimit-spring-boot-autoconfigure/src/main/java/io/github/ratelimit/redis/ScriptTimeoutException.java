package io.github.ratelimit.redis;

import java.util.concurrent.TimeoutException;

/**
 * Redis did not answer a script call in time, or there was no connection to send it on.
 */
final class ScriptTimeoutException extends TimeoutException {

	private static final long serialVersionUID = 1L;

	private final Wait wait;

	ScriptTimeoutException(Wait wait) {
		super((wait == Wait.CONNECTION) ? "No Redis connection within the connect timeout"
				: "No reply from Redis within the command timeout");
		this.wait = wait;
	}

	ScriptTimeoutException(Wait wait, Throwable cause) {
		this(wait);
		initCause(cause);
	}

	/**
	 * Returns what the call was waiting for.
	 * @return the wait that ran out
	 */
	Wait waitedFor() {
		return this.wait;
	}

	/**
	 * What a call waits for.
	 */
	enum Wait {

		/** A connection being made. */
		CONNECTION,

		/** The reply to a command already sent. */
		REPLY

	}

}
