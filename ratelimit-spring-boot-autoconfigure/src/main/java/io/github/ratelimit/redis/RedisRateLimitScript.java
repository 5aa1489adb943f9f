package io.github.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua script behind every Redis decision,
 * {@code META-INF/ratelimit/scripts/rate_limit.lua}, with its SHA-1 for {@code EVALSHA}.
 * The script includes one file per algorithm from the same directory: each line
 * {@code --+ <file>} is replaced by that file's text when the script is loaded (and so
 * are the lines {@code --+ <file>} of an included file), so {@link #source()} is the one
 * chunk Redis runs.
 *
 * @author ratelimit-spring-boot-starter authors
 */
public final class RedisRateLimitScript {

	/** Where the script lives on the classpath. */
	public static final String LOCATION = "META-INF/ratelimit/scripts/rate_limit.lua";

	private static final String DIRECTORY = LOCATION.substring(0, LOCATION.lastIndexOf('/') + 1);

	private static final Pattern INCLUDE = Pattern.compile("^\\s*--\\+\\s*(\\S+)\\s*$");

	@SuppressWarnings("rawtypes")
	private final RedisScript<List> script;

	private final String sha1;

	private final String source;

	private RedisRateLimitScript() {
		// Joined once: the RedisScript of a resource checks it for changes on every
		// call, which in a fat jar means opening the nested jar per decision.
		this.source = join(read(LOCATION));
		this.script = RedisScript.of(this.source, List.class);
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
	 * Returns the script's source, its includes joined in.
	 * @return the Lua source
	 */
	public String source() {
		return this.source;
	}

	private static String join(String text) {
		StringBuilder joined = new StringBuilder(text.length() * 4);
		for (String line : text.split("\n", -1)) {
			Matcher include = INCLUDE.matcher(line);
			if (include.matches()) {
				joined.append(join(read(DIRECTORY + include.group(1))));
			}
			else {
				joined.append(line).append('\n');
			}
		}
		return joined.toString();
	}

	private static String read(String location) {
		ClassPathResource resource = new ClassPathResource(location, RedisRateLimitScript.class.getClassLoader());
		try (InputStream in = resource.getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot read " + location + " from the classpath", ex);
		}
	}

}
