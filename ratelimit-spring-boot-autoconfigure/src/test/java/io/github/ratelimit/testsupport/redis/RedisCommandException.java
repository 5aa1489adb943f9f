package io.github.ratelimit.testsupport.redis;

/**
 * Redis answered a command with an error reply, such as {@code ERR unknown command} or
 * {@code MOVED 866 127.0.0.1:40001}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public class RedisCommandException extends RuntimeException {

	private final String reply;

	/**
	 * Creates an exception for an error reply.
	 * @param reply the error reply without the leading {@code -}
	 */
	public RedisCommandException(String reply) {
		super("Redis replied with an error: " + reply);
		this.reply = reply;
	}

	/**
	 * The error reply as Redis sent it, e.g. {@code NOSCRIPT No matching script}.
	 * @return the error reply
	 */
	public String reply() {
		return this.reply;
	}

}
