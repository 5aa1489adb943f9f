package io.github.ratelimit.webflux;

import java.time.Duration;

import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests that each claim another client address in every forwarded header there is, as
 * one client that wants a fresh limit per request would send them.
 */
final class ForgedClients {

	private ForgedClients() {
	}

	/**
	 * Sends 30 requests, each with other forwarded headers, and counts those admitted.
	 * @param client the client, connected to the application directly
	 * @param path the path
	 * @return how many were answered 200 (the others must be 429)
	 */
	static int admittedOfThirty(WebTestClient client, String path) {
		// Generous: the first requests warm a JVM up on a busy machine.
		WebTestClient patient = client.mutate().responseTimeout(Duration.ofMinutes(1)).build();
		int admitted = 0;
		for (int i = 1; i <= 30; i++) {
			int status = patient.get()
				.uri(path)
				.header("X-Forwarded-For", "198.51.100." + i)
				.header("Forwarded", "for=198.51.101." + i)
				.header("X-Real-IP", "198.51.102." + i)
				.exchange()
				.returnResult(byte[].class)
				.getStatus()
				.value();
			assertThat(status).isIn(200, 429);
			admitted += (status == 200) ? 1 : 0;
		}
		return admitted;
	}

}
