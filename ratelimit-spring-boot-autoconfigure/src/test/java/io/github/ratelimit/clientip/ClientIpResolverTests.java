package io.github.ratelimit.clientip;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ClientIpResolver}: the walk from the connection's address through the
 * forwarded header, past trusted proxies (ranges and hops), the header syntaxes, and that
 * nothing a client writes picks its key or throws.
 *
 * @author ratelimit-spring-boot-starter authors
 */
@ExtendWith(OutputCaptureExtension.class)
class ClientIpResolverTests {

	private static final String XFF = "X-Forwarded-For";

	private static final String FORWARDED = "Forwarded";

	@Test
	void withNothingTrustedTheClientIsThePeerWhateverTheHeaderSays() {
		ClientIpResolver resolver = ClientIpResolver.trustingNothing();
		assertThat(resolver.trustsNothing()).isTrue();
		assertThat(resolver.resolve("203.0.113.9", headers(XFF, "10.0.0.1"))).isEqualTo("203.0.113.9");
		assertThat(resolver.resolve("203.0.113.9", headers(FORWARDED, "for=10.0.0.1"))).isEqualTo("203.0.113.9");
		assertThat(resolver.resolve("203.0.113.9", headers("X-Real-IP", "10.0.0.1"))).isEqualTo("203.0.113.9");
		assertThat(resolver.resolve("203.0.113.9", headers())).isEqualTo("203.0.113.9");
	}

	@Test
	void withNothingTrustedTheHeadersAreReadOnlyUntilTheWarning() {
		AtomicInteger reads = new AtomicInteger();
		ClientIpResolver resolver = ClientIpResolver.trustingNothing();
		resolver.resolve("203.0.113.9", (name) -> {
			reads.incrementAndGet();
			return List.of("10.0.0.1");
		});
		// Only to warn, once: later requests read nothing.
		int afterFirst = reads.get();
		resolver.resolve("203.0.113.9", (name) -> {
			reads.incrementAndGet();
			return List.of("10.0.0.1");
		});
		assertThat(reads).hasValue(afterFirst);
	}

	@Test
	void aHeaderFromAPeerThatIsNoTrustedProxyIsIgnored() {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("203.0.113.9", headers(XFF, "198.51.100.7"))).isEqualTo("203.0.113.9");
		assertThat(resolver.resolve("203.0.113.9", headers(XFF, "198.51.100.7, 10.0.0.2"))).isEqualTo("203.0.113.9");
	}

	@Test
	void fromATrustedProxyTheClientIsTheFirstUntrustedAddressFromTheRight() {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "198.51.100.7"))).isEqualTo("198.51.100.7");
		// The client wrote the first two itself; the proxies appended the rest.
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "1.1.1.1, 2.2.2.2, 198.51.100.7, 10.0.0.3, 10.0.0.2")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void aTrustedProxyWithoutAHeaderIsTheClient() {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("10.0.0.1", headers())).isEqualTo("10.0.0.1");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, ""))).isEqualTo("10.0.0.1");
	}

	@Test
	void whenEveryAddressIsATrustedProxyTheLeftmostIsTheClient() {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "10.9.9.9, 10.0.0.2"))).isEqualTo("10.9.9.9");
	}

	@Test
	void severalRangesAndSingleAddressesAreTrusted() {
		ClientIpResolver resolver = resolver("192.168.0.0/16", "203.0.113.50", "2001:db8::/32");
		assertThat(resolver.resolve("192.168.3.4", headers(XFF, "198.51.100.7, 2001:db8::17, 203.0.113.50")))
			.isEqualTo("198.51.100.7");
		assertThat(resolver.resolve("203.0.113.51", headers(XFF, "198.51.100.7"))).isEqualTo("203.0.113.51");
	}

	@Test
	void ipv6ProxiesAndClientsAreReadInAnyWrittenForm() {
		ClientIpResolver resolver = resolver("2001:db8:1::/48", "::1");
		assertThat(resolver.resolve("0:0:0:0:0:0:0:1", headers(XFF, "2001:DB8:0:0:0:0:0:7, 2001:db8:1:0:0:0:0:2")))
			.isEqualTo("2001:db8::7");
		assertThat(resolver.resolve("::1", headers(XFF, "[2001:db8::7]:4711"))).isEqualTo("2001:db8::7");
		assertThat(resolver.resolve("::1", headers(XFF, "fe80::7%eth0"))).isEqualTo("fe80::7");
		assertThat(resolver.resolve("2001:db8:1::9", headers())).isEqualTo("2001:db8:1::9");
	}

	@Test
	void ipv4MappedAddressesAreTheIpv4Addresses() {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("::ffff:10.0.0.1", headers(XFF, "::ffff:198.51.100.7"))).isEqualTo("198.51.100.7");
		assertThat(resolver.resolve("::ffff:10.0.0.1", headers(XFF, "::ffff:10.0.0.2, 198.51.100.7, ::ffff:10.0.0.3")))
			.isEqualTo("198.51.100.7");
		assertThat(ClientIpResolver.trustingNothing().resolve("::ffff:203.0.113.9", headers()))
			.isEqualTo("203.0.113.9");
	}

	@Test
	void thePeerIsWrittenInTheOneForm() {
		ClientIpResolver resolver = ClientIpResolver.trustingNothing();
		assertThat(resolver.resolve("0:0:0:0:0:0:0:1", headers())).isEqualTo("::1");
		assertThat(resolver.resolve("2001:DB8::1", headers())).isEqualTo("2001:db8::1");
		assertThat(resolver.resolve("fe80:0:0:0:0:0:0:1%2", headers())).isEqualTo("fe80::1");
		assertThat(resolver.resolve("10.0.0.7", headers())).isEqualTo("10.0.0.7");
	}

	@Test
	void aPeerThatIsNoAddressIsTheClientAsWritten() {
		assertThat(resolver("10.0.0.0/8").resolve("local-socket", headers(XFF, "198.51.100.7")))
			.isEqualTo("local-socket");
		assertThat(resolver("10.0.0.0/8").resolve(null, headers(XFF, "198.51.100.7"))).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "unknown", "_hidden", "garbage", "", " ", "198.51.100", "198.51.100.7.8", "999.1.1.1",
			"example.com", "[198.51.100.7]", "[2001:db8::7", "198.51.100.7:port", "198.51.100.7:123456", "\"", "\"\"",
			"::ffff:", ",", ";", "=", "%", "[]:80" })
	void anEntryThatIsNoAddressMakesTheProxyThatPassedItOnTheClient(String entry) {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, entry))).isEqualTo("10.0.0.1");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "198.51.100.99, " + entry + ", 10.0.0.2")))
			.isEqualTo("10.0.0.2");
	}

	@Test
	void aMalformedEntryLeftOfTheClientIsNeverRead() {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "garbage, [, \"unclosed, 198.51.100.7")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void portsAreDropped() {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "198.51.100.7:4711"))).isEqualTo("198.51.100.7");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "198.51.100.7:4711, 10.0.0.2:80")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void severalHeaderLinesAreOneListInTheirOrder() {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "1.1.1.1", "198.51.100.7, 10.0.0.2")))
			.isEqualTo("198.51.100.7");
		assertThat(resolver.resolve("10.0.0.1", headers(XFF, "198.51.100.7", "10.0.0.2"))).isEqualTo("198.51.100.7");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '\'', textBlock = """
			for=198.51.100.7                                          | 198.51.100.7
			For=198.51.100.7                                          | 198.51.100.7
			FOR = 198.51.100.7                                        | 198.51.100.7
			for="198.51.100.7"                                        | 198.51.100.7
			for="198.51.100.7:4711"                                   | 198.51.100.7
			for="198.51.100.7:_p1"                                    | 198.51.100.7
			for="[2001:db8:cafe::17]"                                 | 2001:db8:cafe::17
			for="[2001:db8:cafe::17]:4711"                            | 2001:db8:cafe::17
			for="[2001:DB8:CAFE:0:0:0:0:17]:_port"                    | 2001:db8:cafe::17
			for=198.51.100.7;proto=https;by=10.0.0.2                  | 198.51.100.7
			proto=https;for=198.51.100.7;host=example.com             | 198.51.100.7
			for=1.1.1.1, for=198.51.100.7                             | 198.51.100.7
			for=1.1.1.1, for=198.51.100.7, for=10.0.0.2               | 198.51.100.7
			for=198.51.100.7;by="[2001:db8::1]:80,x", for=10.0.0.2     | 198.51.100.7
			for="\\"oops", for=198.51.100.7                            | 198.51.100.7
			for="unclosed, for=198.51.100.7                           | 198.51.100.7
			for=unknown                                               | 10.0.0.1
			for=_hidden                                               | 10.0.0.1
			for="_hidden:_port"                                       | 10.0.0.1
			for=198.51.100.7, for=unknown                             | 10.0.0.1
			for=198.51.100.7, proto=https                             | 10.0.0.1
			by=10.0.0.2                                               | 10.0.0.1
			for=198.51.100.7, for=_gateway, for=10.0.0.2               | 10.0.0.2
			for="[198.51.100.7]"                                      | 10.0.0.1
			for="[2001:db8::7                                         | 10.0.0.1
			garbage                                                   | 10.0.0.1
			""")
	void forwardedIsReadFromItsForParameters(String forwarded, String client) {
		ClientIpResolver resolver = new ClientIpResolver(List.of(AddressRange.parse("10.0.0.0/8")), 0, FORWARDED);
		assertThat(resolver.resolve("10.0.0.1", headers(FORWARDED, forwarded))).isEqualTo(client);
	}

	@Test
	void onlyTheConfiguredHeaderIsRead() {
		ClientIpResolver xff = resolver("10.0.0.0/8");
		assertThat(xff.resolve("10.0.0.1", headers(FORWARDED, "for=198.51.100.7"))).isEqualTo("10.0.0.1");
		ClientIpResolver forwarded = new ClientIpResolver(List.of(AddressRange.parse("10.0.0.0/8")), 0, FORWARDED);
		assertThat(forwarded.resolve("10.0.0.1", headers(XFF, "198.51.100.7"))).isEqualTo("10.0.0.1");
		Map<String, List<String>> both = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
		both.put(XFF, List.of("1.1.1.1"));
		both.put(FORWARDED, List.of("for=198.51.100.7"));
		assertThat(forwarded.resolve("10.0.0.1", (name) -> both.getOrDefault(name, List.of())))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void aHeaderOfOneAddressCanBeRead() {
		ClientIpResolver resolver = new ClientIpResolver(List.of(AddressRange.parse("10.0.0.0/8")), 0, "X-Real-IP");
		assertThat(resolver.resolve("10.0.0.1", headers("x-real-ip", "198.51.100.7"))).isEqualTo("198.51.100.7");
		assertThat(resolver.resolve("203.0.113.9", headers("X-Real-IP", "198.51.100.7"))).isEqualTo("203.0.113.9");
	}

	@Test
	void trustedHopsCountFromThePeer() {
		ClientIpResolver one = new ClientIpResolver(List.of(), 1, XFF);
		assertThat(one.trustsNothing()).isFalse();
		assertThat(one.resolve("203.0.113.50", headers(XFF, "1.1.1.1, 198.51.100.7"))).isEqualTo("198.51.100.7");
		assertThat(one.resolve("203.0.113.50", headers())).isEqualTo("203.0.113.50");
		ClientIpResolver two = new ClientIpResolver(List.of(), 2, XFF);
		assertThat(two.resolve("203.0.113.50", headers(XFF, "1.1.1.1, 198.51.100.7, 203.0.113.60")))
			.isEqualTo("198.51.100.7");
		// Fewer entries than hops: the leftmost is as far as the header goes.
		assertThat(two.resolve("203.0.113.50", headers(XFF, "198.51.100.7"))).isEqualTo("198.51.100.7");
		assertThat(two.resolve("203.0.113.50", headers(XFF, "unknown, 203.0.113.60"))).isEqualTo("203.0.113.60");
	}

	@Test
	void trustedHopsAndRangesAddUp() {
		ClientIpResolver resolver = new ClientIpResolver(List.of(AddressRange.parse("10.0.0.0/8")), 1, XFF);
		// The peer (hop 0) is trusted by count, the internal proxies by range.
		assertThat(resolver.resolve("203.0.113.50", headers(XFF, "1.1.1.1, 198.51.100.7, 10.0.0.3, 10.0.0.2")))
			.isEqualTo("198.51.100.7");
	}

	@Test
	void warnsOnceWhenAForwardedHeaderArrivesWhileNothingIsTrusted(CapturedOutput output) {
		ClientIpResolver resolver = ClientIpResolver.trustingNothing();
		resolver.resolve("10.0.0.1", headers());
		assertThat(output).doesNotContain("#clientIp");
		for (int i = 0; i < 30; i++) {
			resolver.resolve("10.0.0.1", headers(XFF, "198.51.100." + i));
		}
		resolver.resolve("10.0.0.1", headers(FORWARDED, "for=198.51.100.7"));
		assertThat(output).containsOnlyOnce("WARN")
			.containsOnlyOnce("A request from 10.0.0.1 carries a X-Forwarded-For header, which was ignored for"
					+ " #clientIp: no proxy is trusted (ratelimit.client-ip.trusted-proxies is empty)")
			.contains("set ratelimit.client-ip.trusted-proxies to the proxy's addresses (e.g. 10.0.0.0/8)");
	}

	@ParameterizedTest
	@ValueSource(strings = { "Forwarded", "X-Real-IP" })
	void theWarningNamesTheHeaderToConfigureWhenItIsNotTheDefault(String header, CapturedOutput output) {
		ClientIpResolver.trustingNothing().resolve("10.0.0.1", headers(header, "for=198.51.100.7"));
		assertThat(output).containsOnlyOnce("carries a " + header + " header")
			.contains("and ratelimit.client-ip.header to " + header + ".");
	}

	@Test
	void theWarningWatchesTheConfiguredHeaderToo(CapturedOutput output) {
		new ClientIpResolver(List.of(), 0, "CF-Connecting-IP").resolve("10.0.0.1",
				headers("cf-connecting-ip", "198.51.100.7"));
		assertThat(output).contains("carries a CF-Connecting-IP header");
	}

	@Test
	void doesNotWarnWhenAProxyIsTrusted(CapturedOutput output) {
		ClientIpResolver resolver = resolver("10.0.0.0/8");
		resolver.resolve("203.0.113.9", headers(XFF, "198.51.100.7"));
		resolver.resolve("10.0.0.1", headers(XFF, "198.51.100.7"));
		assertThat(output).doesNotContain("#clientIp");
	}

	@Test
	void saysWhatItTrusts() {
		assertThat(ClientIpResolver.trustingNothing()).hasToString("the connection's address (no proxy trusted)");
		assertThat(new ClientIpResolver(List.of(AddressRange.parse("10.0.0.0/8"), AddressRange.parse("::1")), 1,
				FORWARDED))
			.hasToString("Forwarded past trusted proxies [10.0.0.0/8, ::1/128] and 1 hop");
	}

	private static ClientIpResolver resolver(String... trustedProxies) {
		return new ClientIpResolver(Arrays.stream(trustedProxies).map(AddressRange::parse).toList(), 0, XFF);
	}

	private static RequestHeaders headers() {
		return (name) -> List.of();
	}

	private static RequestHeaders headers(String header, String... values) {
		return (name) -> name.equalsIgnoreCase(header) ? List.of(values) : List.of();
	}

}
