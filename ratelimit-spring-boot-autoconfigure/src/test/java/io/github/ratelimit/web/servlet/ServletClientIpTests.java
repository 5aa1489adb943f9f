package io.github.ratelimit.web.servlet;

import java.util.List;

import jakarta.servlet.Filter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.web.filter.ForwardedHeaderFilter;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.LimitSpec;
import io.github.ratelimit.acquire.Bucket;
import io.github.ratelimit.clientip.AddressRange;
import io.github.ratelimit.clientip.ClientIpResolver;
import io.github.ratelimit.web.FilterRules;
import io.github.ratelimit.web.MatchMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;

/**
 * A filter rule keyed by {@code #clientIp} on Spring MVC, through MockMvc: with no proxy
 * trusted, forwarded headers a client writes cannot give it another key, even when
 * Spring's {@code ForwardedHeaderFilter}
 * ({@code server.forward-headers-strategy=framework}) rewrote the request from them;
 * behind a trusted proxy, each client has its own key.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@ExtendWith(OutputCaptureExtension.class)
class ServletClientIpTests {

	private static final int LIMIT = 10;

	private final WebTestSupport support = new WebTestSupport();

	/** 10 per minute, on a clock that stands still. */
	private final Bucket api = WebTestSupport.bucket("api", LimitSpec.of(LIMIT, "1m", Algorithm.FIXED_WINDOW));

	@Test
	void withNothingTrustedThirtyForgedHeadersShareOneKey() throws Exception {
		MockMvc mvc = mvc(ClientIpResolver.trustingNothing());
		int admitted = 0;
		for (int i = 1; i <= 30; i++) {
			admitted += admitted(mvc,
					get("/api/items").header("X-Forwarded-For", "198.51.100." + i)
						.header("Forwarded", "for=198.51.101." + i)
						.header("X-Real-IP", "198.51.102." + i)
						.with(remoteAddr("203.0.113.9")));
		}
		assertThat(admitted).isEqualTo(LIMIT);
		assertThat(this.support.store.peek("api", "203.0.113.9", this.api.limits()).remaining()).isZero();
	}

	@Test
	void withNothingTrustedSpringsForwardedHeaderFilterDoesNotChangeTheKey() throws Exception {
		MockMvc mvc = mvc(ClientIpResolver.trustingNothing(), new ForwardedHeaderFilter());
		int admitted = 0;
		for (int i = 1; i <= 30; i++) {
			admitted += admitted(mvc,
					get("/api/items").header("X-Forwarded-For", "198.51.100." + i).with(remoteAddr("203.0.113.9")));
		}
		assertThat(admitted).isEqualTo(LIMIT);
	}

	@Test
	void aTrustedProxyGivesEachClientItsOwnKey() throws Exception {
		MockMvc mvc = mvc(trusting("10.0.0.0/8"));
		int admitted = 0;
		for (int i = 1; i <= 30; i++) {
			admitted += admitted(mvc,
					get("/api/items").header("X-Forwarded-For", "198.51.100." + i).with(remoteAddr("10.0.0.1")));
		}
		assertThat(admitted).as("30 clients, one request each").isEqualTo(30);
		int sameClient = 0;
		for (int i = 1; i <= 30; i++) {
			// The client wrote its own X-Forwarded-For; the proxy appended the address it
			// saw.
			sameClient += admitted(mvc, get("/api/items").header("X-Forwarded-For", "192.0.2." + i + ", 198.51.100.99")
				.with(remoteAddr("10.0.0.1")));
		}
		assertThat(sameClient).as("one client, 30 requests").isEqualTo(LIMIT);
	}

	@Test
	void aTrustedProxyBehindSpringsForwardedHeaderFilterStillKeysByClient() throws Exception {
		MockMvc mvc = mvc(trusting("10.0.0.0/8"), new ForwardedHeaderFilter());
		int sameClient = 0;
		for (int i = 1; i <= 30; i++) {
			sameClient += admitted(mvc, get("/api/items").header("X-Forwarded-For", "192.0.2." + i + ", 198.51.100.99")
				.with(remoteAddr("10.0.0.1")));
		}
		assertThat(sameClient).isEqualTo(LIMIT);
	}

	@Test
	void aHeaderFromAClientThatIsNoTrustedProxyIsIgnored() throws Exception {
		MockMvc mvc = mvc(trusting("10.0.0.0/8"));
		int admitted = 0;
		for (int i = 1; i <= 30; i++) {
			admitted += admitted(mvc,
					get("/api/items").header("X-Forwarded-For", "10.0.0." + i).with(remoteAddr("203.0.113.9")));
		}
		assertThat(admitted).isEqualTo(LIMIT);
	}

	@Test
	void anIpv6ClientIsOneKeyHoweverItsAddressIsWritten() throws Exception {
		MockMvc mvc = mvc(trusting("::1"));
		List<String> forms = List.of("2001:db8::7", "2001:DB8:0:0:0:0:0:7", "[2001:db8::7]:4711",
				"2001:0db8:0000::0007", "fe80::1, 2001:db8::7");
		int admitted = 0;
		for (int i = 0; i < 30; i++) {
			admitted += admitted(mvc, get("/api/items").header("X-Forwarded-For", forms.get(i % forms.size()))
				.with(remoteAddr("0:0:0:0:0:0:0:1")));
		}
		assertThat(admitted).isEqualTo(LIMIT);
		assertThat(this.support.store.peek("api", "2001:db8::7", this.api.limits()).remaining()).isZero();
	}

	@Test
	void anIpv4MappedPeerIsTheIpv4Address() throws Exception {
		MockMvc mvc = mvc(ClientIpResolver.trustingNothing());
		int admitted = 0;
		for (int i = 0; i < 30; i++) {
			String peer = (i % 2 == 0) ? "::ffff:203.0.113.9" : "203.0.113.9";
			admitted += admitted(mvc, get("/api/items").with(remoteAddr(peer)));
		}
		assertThat(admitted).isEqualTo(LIMIT);
	}

	@Test
	void warnsOnceThatTheHeaderWasIgnored(CapturedOutput output) throws Exception {
		MockMvc mvc = mvc(ClientIpResolver.trustingNothing());
		for (int i = 1; i <= 30; i++) {
			admitted(mvc,
					get("/api/items").header("X-Forwarded-For", "198.51.100." + i).with(remoteAddr("203.0.113.9")));
		}
		assertThat(output).containsOnlyOnce("WARN")
			.containsOnlyOnce("carries a X-Forwarded-For header, which was ignored for #clientIp")
			.contains("set ratelimit.client-ip.trusted-proxies");
	}

	@Test
	void aRuleThatDoesNotReadTheClientIpNeverWarns(CapturedOutput output) throws Exception {
		FilterRules rules = new FilterRules(
				List.of(this.support.rule(0, this.api)
					.key("#request.getHeader('X-Api-Key') + #request.method")
					.build(this.support.expressions, new ServletRequestVariables(ClientIpResolver.trustingNothing()))),
				MatchMode.FIRST);
		MockMvc mvc = this.support.mvc(new RateLimitFilter(rules, this.support.acquirer, this.support.responses));
		admitted(mvc, get("/api/items").header("X-Api-Key", "k").header("X-Forwarded-For", "198.51.100.1"));
		assertThat(output).doesNotContain("#clientIp");
	}

	private MockMvc mvc(ClientIpResolver clientIps, Filter... before) {
		FilterRules rules = new FilterRules(List.of(this.support.rule(0, this.api)
			.key("#clientIp")
			.build(this.support.expressions, new ServletRequestVariables(clientIps))), MatchMode.FIRST);
		Filter[] filters = new Filter[before.length + 1];
		System.arraycopy(before, 0, filters, 0, before.length);
		filters[before.length] = new RateLimitFilter(rules, this.support.acquirer, this.support.responses);
		return this.support.mvc(filters);
	}

	private static int admitted(MockMvc mvc, MockHttpServletRequestBuilder request) throws Exception {
		int status = mvc.perform(request).andReturn().getResponse().getStatus();
		assertThat(status).isIn(200, 429);
		return (status == 200) ? 1 : 0;
	}

	private static ClientIpResolver trusting(String... ranges) {
		return new ClientIpResolver(List.of(ranges).stream().map(AddressRange::parse).toList(), 0,
				ClientIpResolver.X_FORWARDED_FOR);
	}

	private static org.springframework.test.web.servlet.request.RequestPostProcessor remoteAddr(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}

}
