package io.github.ratelimit.redis;

/**
 * Redis answered {@code SCRIPT LOAD} with an error: it is reachable, but will not run the
 * script (scripting disabled, an ACL, a Redis too old).
 */
final class ScriptRefusedException extends Exception {

	private static final long serialVersionUID = 1L;

	ScriptRefusedException(Throwable cause) {
		super(cause.getMessage(), cause);
	}

}
