package io.github.ratelimit.sample;

import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /login} as a form or as JSON: 200 for alice / correct-horse, 401 for a
 * wrong password, 429 after 5 failures for one username within a minute.
 */
@RestController
class LoginController {

	private final LoginService loginService;

	LoginController(LoginService loginService) {
		this.loginService = loginService;
	}

	@PostMapping(path = "/login", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE)
	ResponseEntity<Map<String, String>> loginForm(@RequestParam String username, @RequestParam String password) {
		return login(username, password);
	}

	@PostMapping(path = "/login", consumes = MediaType.APPLICATION_JSON_VALUE)
	ResponseEntity<Map<String, String>> loginJson(@RequestBody Credentials credentials) {
		return login(credentials.username(), credentials.password());
	}

	private ResponseEntity<Map<String, String>> login(String username, String password) {
		if (this.loginService.login(username, password)) {
			return ResponseEntity.ok(Map.of("status", "logged in", "username", username));
		}
		return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("status", "invalid credentials"));
	}

	record Credentials(String username, String password) {
	}

}
