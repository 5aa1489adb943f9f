package io.github.ratelimit.gateway;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The route keyed by {@link ClientIpKeyResolver} behind a trusted proxy: the test client
 * connects from the loopback address, trusted with
 * {@code ratelimit.client-ip.trusted-proxies}, and plays the proxy, so each address it
 * forwards for is a client with a limit of its own, and what a client wrote left of the
 * proxy's entry changes nothing.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "ratelimit.client-ip.trusted-proxies=127.0.0.1,::1")
@ActiveProfiles("routes")
class GatewayClientIpTests {

	private static final Backend backend = Backend.start();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void backend(DynamicPropertyRegistry registry) {
		registry.add("backend.uri", backend::uri);
	}

	@AfterAll
	static void stopBackend() {
		backend.close();
	}

	@Test
	void eachClientTheProxyForwardsForHasItsOwnKey() throws Exception {
		int clients = 0;
		int oneClient = 0;
		for (int i = 1; i <= 30; i++) {
			clients += admitted("198.51.100." + i);
			// The client wrote its own X-Forwarded-For; the proxy appended the address it
			// saw.
			oneClient += admitted("192.0.2." + i + ", 203.0.113.7");
		}
		assertThat(clients).as("30 clients, one request each").isEqualTo(30);
		assertThat(oneClient).as("one client, 30 requests").isEqualTo(10);
	}

	private int admitted(String forwardedFor) throws Exception {
		int status = Backend.getForwardedFor(this.port, "/per-client/x", forwardedFor);
		assertThat(status).isIn(200, 429);
		return (status == 200) ? 1 : 0;
	}

}
