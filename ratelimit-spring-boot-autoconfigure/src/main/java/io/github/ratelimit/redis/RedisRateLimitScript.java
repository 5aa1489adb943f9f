package io.github.ratelimit.redis;

import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua script behind every Redis decision,
 * {@code META-INF/ratelimit/scripts/rate_limit.lua}, with its SHA-1 for {@code EVALSHA}.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisRateLimitScript {

	/** Where the script lives on the classpath. */
	public static final String LOCATION = "META-INF/ratelimit/scripts/rate_limit.lua";

	@SuppressWarnings("rawtypes")
	private final RedisScript<List> script;

	private final String sha1;

	private final String source;

	private RedisRateLimitScript() {
		this.script = RedisScript.of(new ClassPathResource(LOCATION, RedisRateLimitScript.class.getClassLoader()),
				List.class);
		// Read once: the RedisScript checks the resource for changes on every call, which
		// in a
		// fat jar means opening the nested jar per decision.
		this.source = this.script.getScriptAsString();
		this.sha1 = this.script.getSha1();
	}

	/**
	 * Loads the script from the classpath.
	 * @return the script
	 */
	public static RedisRateLimitScript load() {
		return new RedisRateLimitScript();
	}

	/**
	 * Returns the script as a Spring Data Redis {@link RedisScript}.
	 * @return the script
	 */
	@SuppressWarnings("rawtypes")
	public RedisScript<List> redisScript() {
		return this.script;
	}

	/**
	 * Returns the SHA-1 Redis knows the script by.
	 * @return the SHA-1 in hex
	 */
	public String sha1() {
		return this.sha1;
	}

	/**
	 * Returns the script's source.
	 * @return the Lua source
	 */
	public String source() {
		return this.source;
	}

}
