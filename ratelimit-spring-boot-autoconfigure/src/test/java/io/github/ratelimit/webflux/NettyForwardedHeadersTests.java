package io.github.ratelimit.webflux;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code #clientIp} on Netty with Reactor Netty's forwarded-header handling on
 * ({@code server.forward-headers-strategy=native}, which Spring Boot also turns on by
 * itself on a cloud platform such as Kubernetes): the request's remote address is then
 * the leftmost {@code X-Forwarded-For} value, which any client writes, but
 * {@code #clientIp} reads the connection. With no proxy trusted, 30 requests with forged
 * headers share one key, in a filter rule and in {@code @RateLimited} alike, and the
 * ignored header is logged once.
 */
@SpringBootTest(classes = WebFluxTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "server.forward-headers-strategy=native",
				"ratelimit.store=memory", "ratelimit.buckets.api.algorithm=fixed-window",
				"ratelimit.buckets.api.limit=10", "ratelimit.buckets.api.window=1h",
				"ratelimit.filter.rules[0].bucket=api", "ratelimit.filter.rules[0].paths=/api/greeting",
				"ratelimit.filter.rules[0].key=#clientIp" })
@AutoConfigureWebTestClient(timeout = "PT1M")
@ExtendWith(OutputCaptureExtension.class)
class NettyForwardedHeadersTests {

	@Autowired
	private WebTestClient client;

	@Test
	void forgedHeadersShareOneKeyAndTheIgnoredHeaderIsLoggedOnce(CapturedOutput output) {
		assertThat(ForgedClients.admittedOfThirty(this.client, "/api/greeting")).isEqualTo(10);
		// @RateLimited(bucket = "quotes", key = "#clientIp", limit = 3).
		assertThat(ForgedClients.admittedOfThirty(this.client, "/api/quote")).isEqualTo(3);
		assertThat(output).containsOnlyOnce("which was ignored for #clientIp");
	}

}
