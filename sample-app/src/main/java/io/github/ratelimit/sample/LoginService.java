package io.github.ratelimit.sample;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import org.springframework.stereotype.Service;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;

/**
 * Checks passwords, limited per username: 5 failed attempts per minute (a sliding log, so
 * exactly 5 in any minute). A successful login gives its permit back, so only failures
 * count.
 */
@Service
class LoginService {

	private static final byte[] DEMO_PASSWORD = "correct-horse".getBytes(StandardCharsets.UTF_8);

	@RateLimited(bucket = "login", key = "#username", limit = 5, window = "1m", algorithm = Algorithm.SLIDING_LOG,
			refundWhen = "#result")
	public boolean login(String username, String password) {
		boolean userMatches = "alice".equals(username);
		boolean passwordMatches = MessageDigest.isEqual(DEMO_PASSWORD, password.getBytes(StandardCharsets.UTF_8));
		return userMatches && passwordMatches;
	}

}
