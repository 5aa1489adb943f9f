package io.github.ratelimit.readme;

import org.springframework.stereotype.Service;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;

@Service
public class LoginService {

	private final UserDirectory users;

	public LoginService(UserDirectory users) {
		this.users = users;
	}

	// 5 failed attempts per username per minute; a success gives its permit back.
	@RateLimited(bucket = "login", key = "#username", limit = 5, window = "1m", algorithm = Algorithm.SLIDING_LOG,
			refundWhen = "#result")
	public boolean login(String username, String password) {
		return this.users.check(username, password);
	}

}
